"""UI-TARS reply parsing: every layout, action and coordinate form of the spec, and the errors.

Model replies below are written as the model emits them: a ``\\n`` inside a quoted argument is
the two characters backslash and n, which the parser decodes (hence the raw strings).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vdesk.actions import ActionType, BaseAction
from vdesk.adapters.uitars import GRID_SIZE, UITarsReply, parse
from vdesk.coords import ImageSpace, Screen, smart_resize
from vdesk.errors import InvalidAction, ParseError


FULL_HD = ImageSpace(1920, 1080)


def tool_call(function: str, parameters: str = "") -> str:
    return f"<seed:tool_call><function={function}>{parameters}</function></seed:tool_call>"


def only(reply: UITarsReply) -> BaseAction:
    assert len(reply.actions) == 1, reply.actions
    return reply.actions[0]


def normalized(coordinates) -> tuple[float, float]:
    assert coordinates is not None and coordinates.normalized is not None
    return (coordinates.normalized.x, coordinates.normalized.y)


def action_of(text: str, **options) -> BaseAction:
    return only(parse(text, **options))


# --------------------------------------------------------------------------- spec examples


def test_click_start_box_in_parentheses_is_a_point_on_the_1000_grid():
    action = action_of("Thought: The OK button.\nAction: click(start_box='(100,200)')")
    assert action.type is ActionType.CLICK
    assert normalized(action.inputs.point) == (0.1, 0.2)
    assert action.inputs.point.raw is None and action.inputs.point.reference_box is None


def test_drag_with_bracketed_start_and_end_boxes():
    action = action_of("Action: drag(start_box='[130,226]', end_box='[200,226]')")
    assert action.type is ActionType.DRAG
    assert normalized(action.inputs.start) == (0.13, 0.226)
    assert normalized(action.inputs.end) == (0.2, 0.226)


def test_hotkey_keeps_the_key_combination():
    action = action_of("Action: hotkey(key='ctrl c')")
    assert action.type is ActionType.HOTKEY
    assert action.inputs.key == "ctrl c"
    assert action.inputs.keysyms == ("Control_L", "c")


def test_type_decodes_escaped_newline_and_keeps_it_trailing():
    action = action_of(r"Action: type(content='hello\n')")
    assert action.type is ActionType.TYPE
    assert action.inputs.content == "hello\n"


def test_scroll_with_point_and_direction():
    action = action_of("Action: scroll(start_box='(500,500)', direction='down')")
    assert action.type is ActionType.SCROLL
    assert action.inputs.direction == "down"
    assert normalized(action.inputs.point) == (0.5, 0.5)


def test_finished_carries_its_content():
    action = action_of("Action: finished(content='done')")
    assert action.type is ActionType.FINISHED
    assert action.inputs.content == "done"


def test_call_user_without_arguments():
    assert action_of("Action: call_user()").type is ActionType.CALL_USER


def test_wait_without_arguments_leaves_time_to_the_executor():
    action = action_of("Action: wait()")
    assert action.type is ActionType.WAIT
    assert action.inputs.time is None


def test_left_double_with_point_tag_means_double_click_at_start_box():
    action = action_of("Action: left_double(point='<point>18 58</point>')")
    assert action.type is ActionType.DOUBLE_CLICK
    assert normalized(action.inputs.point) == (0.018, 0.058)


# --------------------------------------------------------------------------- action names


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("Action: left_single(start_box='(10,20)')", ActionType.CLICK),
        ("Action: click(point='<point>10 20</point>')", ActionType.CLICK),
        ("Action: right_single(start_box='(10,20)')", ActionType.RIGHT_CLICK),
        ("Action: double_click(start_box='(10,20)')", ActionType.DOUBLE_CLICK),
        ("Action: mouse_move(start_box='(10,20)')", ActionType.MOUSE_MOVE),
        ("Action: hover(point='<point>10 20</point>')", ActionType.MOUSE_MOVE),
        ("Action: Click(start_box='(10,20)')", ActionType.CLICK),
    ],
)
def test_pointing_action_names_map_to_vdesk_types(reply, kind):
    action = action_of(reply)
    assert action.type is kind
    assert normalized(action.inputs.point) == (0.01, 0.02)


def test_select_is_a_drag_between_two_boxes():
    action = action_of("Action: select(start_box='(100,100)', end_box='(300,100)')")
    assert action.type is ActionType.DRAG
    assert normalized(action.inputs.start) == (0.1, 0.1)
    assert normalized(action.inputs.end) == (0.3, 0.1)


@pytest.mark.parametrize(
    ("reply", "kind", "key"),
    [
        ("Action: press(key='enter')", ActionType.PRESS, "enter"),
        ("Action: keydown(key='shift')", ActionType.PRESS, "shift"),
        ("Action: release(key='shift')", ActionType.RELEASE, "shift"),
        ("Action: keyup(key='ctrl')", ActionType.RELEASE, "ctrl"),
        ("Action: hotkey(key='ctrl shift t')", ActionType.HOTKEY, "ctrl shift t"),
        ("Action: hotkey(key='alt+f4')", ActionType.HOTKEY, "alt+f4"),
    ],
)
def test_key_actions_keep_their_key(reply, kind, key):
    action = action_of(reply)
    assert action.type is kind
    assert action.inputs.key == key


def test_scroll_without_a_point_is_allowed():
    action = action_of("Action: scroll(direction='up')")
    assert action.type is ActionType.SCROLL
    assert action.inputs.point is None
    assert action.inputs.direction == "up"


def test_scroll_direction_in_capitals_is_lowercased():
    action = action_of("Action: scroll(point='<point>500 300</point>', direction='LEFT')")
    assert action.inputs.direction == "left"


def test_wait_with_a_time_keeps_the_seconds():
    assert action_of("Action: wait(time='2')").inputs.time == 2.0


def test_finished_without_content_is_allowed():
    action = action_of("Action: finished()")
    assert action.type is ActionType.FINISHED
    assert action.inputs.content is None


@pytest.mark.parametrize("name", ["navigate", "open_app", "long_press", "press_home", "swipe"])
def test_browser_and_mobile_actions_are_rejected_as_unsupported_on_a_desktop(name):
    with pytest.raises(ParseError, match="unsupported on a desktop") as error:
        parse(f"Action: {name}(content='x')")
    assert f"{name}(content='x')" in str(error.value)


def test_unknown_action_name_is_named_in_the_error():
    with pytest.raises(ParseError, match="unknown action 'teleport'") as error:
        parse("Thought: go\nAction: teleport(start_box='(1,2)')")
    assert "teleport(start_box='(1,2)')" in str(error.value)


# --------------------------------------------------------------------------- arguments


def test_escaped_quotes_inside_content_are_decoded():
    assert action_of(r"Action: type(content='it\'s \"fine\"')").inputs.content == "it's \"fine\""


def test_double_quoted_arguments_are_read_like_single_quoted_ones():
    action = action_of('Action: type(content="say \'hi\'")')
    assert action.inputs.content == "say 'hi'"


def test_unescaped_apostrophe_inside_content_is_kept_as_text():
    assert action_of("Action: type(content='I'm here')").inputs.content == "I'm here"


def test_commas_and_parentheses_inside_quotes_do_not_split_arguments():
    action = action_of("Action: type(content='a, b) and (c, d=e')")
    assert action.inputs.content == "a, b) and (c, d=e"


def test_backslash_before_an_ordinary_letter_stays_as_written():
    assert action_of(r"Action: type(content='C:\Users\me')").inputs.content == "C:\\Users\\me"


def test_escaped_tab_and_backslash_are_decoded():
    assert action_of(r"Action: type(content='a\tb\\c')").inputs.content == "a\tb\\c"


def test_unicode_content_arrives_exactly():
    text = "Grüße, 你好 👋"
    assert action_of(f"Action: type(content='{text}')").inputs.content == text


def test_box_tokens_are_stripped_from_coordinates():
    action = action_of("Action: click(start_box='<|box_start|>(250,750)<|box_end|>')")
    assert normalized(action.inputs.point) == (0.25, 0.75)


def test_unquoted_coordinate_argument_is_accepted():
    assert normalized(action_of("Action: click(start_box=(100,200))").inputs.point) == (0.1, 0.2)


def test_trailing_comma_in_the_argument_list_is_accepted():
    assert action_of("Action: finished(content='ok',)").inputs.content == "ok"


def test_point_and_start_box_together_are_rejected_as_repeated():
    with pytest.raises(ParseError, match="repeats start_box"):
        parse("Action: click(start_box='(1,2)', point='(1,2)')")


def test_unknown_argument_is_rejected_with_the_call_quoted():
    with pytest.raises(ParseError) as error:
        parse("Action: click(start_box='(1,2)', colour='red')")
    assert "colour" in str(error.value)
    assert "click(start_box='(1,2)', colour='red')" in str(error.value)


# --------------------------------------------------------------------------- coordinates


@pytest.mark.parametrize(
    "written",
    ["100,200", "100 200", "(100,200)", "[100,200]", "<point>100 200</point>", " ( 100 , 200 ) ",
     "100.0, 200.0", "[100, 200]"],
)
def test_every_point_form_names_the_same_place(written):
    assert normalized(action_of(f"Action: click(start_box='{written}')").inputs.point) == (0.1, 0.2)


@pytest.mark.parametrize(
    "written",
    [
        "<bbox>100 200 300 400</bbox>",
        "(100,200,300,400)",
        "[100, 200, 300, 400]",
        "100 200 300 400",
    ],
)
def test_a_box_targets_its_centre_and_is_kept_as_reference_box(written):
    point = action_of(f"Action: click(start_box='{written}')").inputs.point
    assert normalized(point) == (0.2, 0.3)
    box = point.reference_box
    assert (box.x1, box.y1, box.x2, box.y2) == (100, 200, 300, 400)


def test_grid_edges_zero_and_1000_are_inside_the_screen():
    assert normalized(action_of("Action: click(start_box='(0,1000)')").inputs.point) == (0.0, 1.0)


@pytest.mark.parametrize("written", ["(1001,200)", "(100,-5)", "(100,200,300,1400)"])
def test_grid_coordinates_outside_0_to_1000_are_rejected_with_the_coordinate_quoted(written):
    with pytest.raises(ParseError, match="outside the 0..1000 grid") as error:
        parse(f"Action: click(start_box='{written}')")
    assert f'"{written}"' in str(error.value)


def test_smart_resize_maps_pixels_of_the_resized_1920x1080_screenshot():
    seen = smart_resize(1920, 1080)
    assert seen.size == (1932, 1092)
    action = action_of(
        "Action: click(start_box='(966,546)')", mode="smart_resize", image=FULL_HD
    )
    assert normalized(action.inputs.point) == (0.5, 0.5)


def test_smart_resize_point_lands_on_the_matching_screen_pixel():
    action = action_of(
        "Action: click(start_box='<point>1932 0</point>')", mode="smart_resize", image=FULL_HD
    )
    assert action.inputs.point.resolve(Screen(1920, 1080)).x == 1919


def test_smart_resize_box_keeps_reference_box_in_model_pixels():
    point = action_of(
        "Action: click(start_box='<bbox>0 0 1932 1092</bbox>')", mode="smart_resize", image=FULL_HD
    ).inputs.point
    assert normalized(point) == (0.5, 0.5)
    assert (point.reference_box.x2, point.reference_box.y2) == (1932, 1092)


def test_smart_resize_rejects_pixels_beyond_the_resized_image():
    with pytest.raises(ParseError, match="outside the 1932x1092 image") as error:
        parse("Action: click(start_box='(1933,10)')", mode="smart_resize", image=FULL_HD)
    assert '"(1933,10)"' in str(error.value)


def test_smart_resize_without_image_is_a_clear_caller_error():
    with pytest.raises(ValueError, match="needs image="):
        parse("Action: click(start_box='(1,2)')", mode="smart_resize")


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="unknown mode"):
        parse("Action: wait()", mode="pixels")  # type: ignore[arg-type]


def test_grid_mode_ignores_the_image_size():
    action = action_of("Action: click(start_box='(500,500)')", image=FULL_HD)
    assert normalized(action.inputs.point) == (0.5, 0.5)


@pytest.mark.parametrize("written", ["(abc,200)", "(100;200)", "<point>1 2", "x=1 y=2", ""])
def test_coordinate_that_is_not_numbers_is_quoted_in_the_error(written):
    with pytest.raises(ParseError, match="not numbers") as error:
        parse(f"Action: click(start_box='{written}')")
    assert f'"{written}"' in str(error.value)


@pytest.mark.parametrize("written", ["(100)", "(1,2,3)", "1 2 3 4 5"])
def test_coordinate_with_neither_2_nor_4_numbers_is_rejected(written):
    with pytest.raises(ParseError, match="not 2 .* or 4") as error:
        parse(f"Action: click(start_box='{written}')")
    assert f'"{written}"' in str(error.value)


# --------------------------------------------------------------------------- layout 1: labels


def test_thought_label_is_kept():
    reply = parse(
        "Thought: I need to open the File menu first.\nAction: click(start_box='(30,15)')"
    )
    assert reply.thought == "I need to open the File menu first."
    assert reply.reflection is None and reply.action_summary is None


def test_reflection_and_action_summary_are_kept():
    reply = parse(
        "Reflection: The last click missed the menu.\n"
        "Action_Summary: Click the File menu again, slightly lower.\n"
        "Action: click(start_box='(30,20)')"
    )
    assert reply.thought is None
    assert reply.reflection == "The last click missed the menu."
    assert reply.action_summary == "Click the File menu again, slightly lower."
    assert normalized(only(reply).inputs.point) == (0.03, 0.02)


def test_full_width_colons_are_labels_too():
    reply = parse("Thought：点击确定按钮\nAction：click(start_box='(500,600)')")
    assert reply.thought == "点击确定按钮"
    assert only(reply).type is ActionType.CLICK


def test_multiline_thought_is_kept_whole():
    reply = parse("Thought: First line.\nSecond line.\n\nAction: wait()")
    assert reply.thought == "First line.\nSecond line."


def test_the_last_action_label_wins():
    reply = parse(
        "Thought: Earlier I wrote Action: click(start_box='(1,1)') but that was wrong.\n"
        "Action: click(start_box='(900,900)')"
    )
    assert normalized(only(reply).inputs.point) == (0.9, 0.9)
    assert "that was wrong" in reply.thought


def test_action_label_inside_typed_content_does_not_split_the_call():
    action = action_of("Thought: type it\nAction: type(content='Action: deploy')")
    assert action.inputs.content == "Action: deploy"


def test_raw_keeps_the_reply_exactly():
    text = "Thought: x\nAction: click(start_box='<|box_start|>(1,2)<|box_end|>')\n"
    assert parse(text).raw == text


def test_several_actions_separated_by_blank_lines_run_in_order():
    reply = parse(
        "Thought: Fill in the search box and submit.\n"
        "Action: click(start_box='(500,100)')\n\n"
        "type(content='weather in Paris')\n\n"
        "hotkey(key='enter')"
    )
    assert [a.type for a in reply.actions] == [ActionType.CLICK, ActionType.TYPE, ActionType.HOTKEY]
    assert reply.actions[1].inputs.content == "weather in Paris"


def test_blank_line_inside_quoted_content_does_not_start_a_new_action():
    reply = parse("Action: type(content='first paragraph\n\nsecond paragraph')\n\nwait()")
    assert [a.type for a in reply.actions] == [ActionType.TYPE, ActionType.WAIT]
    assert reply.actions[0].inputs.content == "first paragraph\n\nsecond paragraph"


def test_think_block_supplies_the_thought_when_no_thought_label_is_given():
    reply = parse("<think>The dialog is open.</think>\nAction: click(start_box='(10,10)')")
    assert reply.thought == "The dialog is open."


# --------------------------------------------------------------------------- layout 2: <Thought>


def test_thought_tags_with_output_wrapper():
    reply = parse(
        "<Thought>The Save button is at the top left.</Thought>\n"
        "<Output>Action: click(start_box='(40,60)')</Output>"
    )
    assert reply.thought == "The Save button is at the top left."
    assert normalized(only(reply).inputs.point) == (0.04, 0.06)


def test_thought_tags_with_action_label_and_closing_output():
    reply = parse(
        r"<Thought>Type the name.</Thought> Action: type(content='report.pdf\n') </Output>"
    )
    assert reply.thought == "Type the name."
    assert only(reply).inputs.content == "report.pdf\n"


def test_thought_tags_with_several_actions():
    reply = parse(
        "<Thought>Copy it.</Thought>\n"
        "Action: hotkey(key='ctrl a')\n\nhotkey(key='ctrl c')\n</Output>"
    )
    assert [a.inputs.key for a in reply.actions] == ["ctrl a", "ctrl c"]


# --------------------------------------------------------------------------- layout 3: <think>


def test_think_with_computer_env_action():
    reply = parse(
        "<think>I should scroll to find the settings.</think>\n"
        "<computer_env>\n"
        "Action: scroll(point='<point>500 500</point>', direction='down')\n"
        "</computer_env>"
    )
    assert reply.thought == "I should scroll to find the settings."
    action = only(reply)
    assert action.type is ActionType.SCROLL and normalized(action.inputs.point) == (0.5, 0.5)


def test_computer_env_without_closing_tag_is_read_to_the_end():
    # Serving stacks often cut the reply at the closing tag, their stop sequence.
    assert action_of("<think>go</think><computer_env>Action: wait()").type is ActionType.WAIT


def test_answer_becomes_finished_with_the_answer_as_content():
    reply = parse("<think>The total is shown in cell B7.</think>\n<answer>  42.50 EUR </answer>")
    assert reply.thought == "The total is shown in cell B7."
    action = only(reply)
    assert action.type is ActionType.FINISHED
    assert action.inputs.content == "42.50 EUR"


# --------------------------------------------------------------------------- layout 4: tool calls


def test_seed_tool_call_with_point_parameter():
    reply = parse(
        "<seed:think>Click the address bar.</seed:think>\n"
        "<seed:tool_call>\n<function=click>\n<parameter=point><point>500 40</point></parameter>\n"
        "</function>\n</seed:tool_call>"
    )
    assert reply.thought == "Click the address bar."
    assert normalized(only(reply).inputs.point) == (0.5, 0.04)


def test_several_tool_calls_run_in_order():
    reply = parse(
        "<seed:tool_call><function=drag>"
        "<parameter=start_point><point>100 100</point></parameter>"
        "<parameter=end_point><point>200 300</point></parameter>"
        "</function></seed:tool_call>\n"
        + tool_call("type", "<parameter=content>done</parameter>")
    )
    drag, typed = reply.actions
    assert drag.type is ActionType.DRAG
    assert normalized(drag.inputs.start) == (0.1, 0.1) and normalized(drag.inputs.end) == (0.2, 0.3)
    assert typed.inputs.content == "done"


def test_tool_call_content_is_taken_as_written():
    action = action_of(tool_call("type", "<parameter=content>a\\n b </parameter>"))
    assert action.inputs.content == "a\\n b "


def test_tool_call_other_values_lose_surrounding_whitespace():
    action = action_of(tool_call("hotkey", "<parameter=key>\n ctrl v \n</parameter>"))
    assert action.inputs.key == "ctrl v"


def test_unclosed_function_tag_is_quoted():
    with pytest.raises(ParseError, match="unclosed <function=") as error:
        parse("<seed:tool_call><function=click><parameter=point>1 2</parameter>")
    assert "<function=click>" in str(error.value)


def test_unclosed_parameter_tag_is_quoted():
    with pytest.raises(ParseError, match="unclosed <parameter=") as error:
        parse("<seed:tool_call><function=click><parameter=point>1 2</function></seed:tool_call>")
    assert "<parameter=point>1 2" in str(error.value)


def test_tool_call_without_function_is_rejected():
    with pytest.raises(ParseError, match="without a <function=NAME>"):
        parse("<seed:tool_call>click here</seed:tool_call>")


def test_unknown_tool_call_function_is_named():
    with pytest.raises(ParseError, match="unknown action 'open_browser'"):
        parse("<seed:tool_call><function=open_browser></function></seed:tool_call>")


# --------------------------------------------------------------------------- layout 5: fallback


def test_fallback_finds_the_first_call_in_free_text():
    action = action_of(
        "I will now click(start_box='(120,340)') to open it, then type(content='x')."
    )
    assert action.type is ActionType.CLICK
    assert normalized(action.inputs.point) == (0.12, 0.34)


def test_fallback_reads_a_bare_call():
    assert action_of("call_user()").type is ActionType.CALL_USER


def test_thought_without_action_label_falls_back_to_the_first_call():
    reply = parse("Thought: nothing to do but wait() here")
    assert only(reply).type is ActionType.WAIT


# --------------------------------------------------------------------------- malformed replies


@pytest.mark.parametrize(
    "text", ["", "   \n ", "I cannot help with that.", "Thought: hmm, no idea."]
)
def test_reply_without_any_action_is_rejected(text):
    with pytest.raises(ParseError, match="no action found"):
        parse(text)


def test_no_action_error_quotes_the_reply():
    with pytest.raises(ParseError) as error:
        parse("I cannot help with that.")
    assert '"I cannot help with that."' in str(error.value)


def test_empty_action_after_the_label_is_rejected():
    with pytest.raises(ParseError, match="empty action"):
        parse("Thought: done?\nAction:   ")


def test_unbalanced_quote_is_quoted_in_the_error():
    with pytest.raises(ParseError, match="unbalanced quotes") as error:
        parse("Action: click(start_box='(100,200))")
    assert "click(start_box='(100,200))" in str(error.value)


def test_missing_closing_parenthesis_is_quoted_in_the_error():
    with pytest.raises(ParseError, match="unbalanced parentheses") as error:
        parse("Action: click(start_box='(100,200)'")
    assert "click(start_box='(100,200)'" in str(error.value)


def test_unbalanced_bare_value_is_rejected():
    with pytest.raises(ParseError, match="unbalanced parentheses"):
        parse("Action: click(start_box=(100,200)")


def test_action_text_that_is_not_a_call_is_quoted():
    with pytest.raises(ParseError, match="expected an action call") as error:
        parse("Thought: ok\nAction: press the OK button")
    assert '"press the OK button"' in str(error.value)


def test_text_after_a_valid_call_is_rejected_rather_than_ignored():
    with pytest.raises(ParseError, match="expected an action call") as error:
        parse("Action: click(start_box='(1,2)') and then more")
    assert '"and then more"' in str(error.value)


def test_positional_argument_is_rejected_with_the_call_quoted():
    with pytest.raises(ParseError, match="expected name=value") as error:
        parse("Action: hotkey('ctrl c')")
    assert "hotkey('ctrl c')" in str(error.value)


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("Action: click()", "click needs input point"),
        ("Action: type()", "type needs input content"),
        ("Action: hotkey()", "hotkey needs input key"),
        ("Action: drag(start_box='(1,2)')", "drag needs input"),
        ("Action: scroll(start_box='(1,2)')", "scroll needs input direction"),
    ],
)
def test_missing_required_argument_names_it_and_quotes_the_call(text, missing):
    with pytest.raises(ParseError, match=missing) as error:
        parse(text)
    assert text.removeprefix("Action: ") in str(error.value)


def test_unknown_key_name_is_reported():
    with pytest.raises(ParseError, match="unknown key 'hyperkey'"):
        parse("Action: hotkey(key='ctrl hyperkey')")


def test_bad_scroll_direction_is_reported():
    with pytest.raises(ParseError, match="direction"):
        parse("Action: scroll(direction='sideways')")


def test_parse_errors_are_invalid_actions():
    assert issubclass(ParseError, InvalidAction)
    with pytest.raises(InvalidAction):
        parse("Action: teleport()")


# --------------------------------------------------------------------------- properties

_FRAGMENTS = [
    "Thought: ", "Thought：", "Reflection: ", "Action_Summary: ", "Action: ", "Action：",
    "\n", "\n\n",
    "<Thought>", "</Thought>", "<Output>", "</Output>", "<think>", "</think>", "<seed:think>",
    "</seed:think>", "<computer_env>", "</computer_env>", "<answer>", "</answer>",
    "<seed:tool_call>", "</seed:tool_call>", "<function=click>", "<function=", "</function>",
    "<parameter=point>", "<parameter=", "</parameter>", "<point>", "</point>", "<bbox>", "</bbox>",
    "<|box_start|>", "<|box_end|>", "click(", "type(", "drag(", "scroll(", "hotkey(", "wait(",
    "finished(", "navigate(", "foo(", "start_box=", "end_box=", "point=", "content=", "key=",
    "direction=", "time=", "'", '"', "\\", "\\n", "\\'", "(", ")", "[", "]", ",", " ", "=",
    "100", "200", "1000", "1001", "-5", "1e999", "0.5", "ctrl c", "down", "x",
]

_replies = st.one_of(
    st.text(),
    st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=3), max_size=30).map("".join),
)


@settings(max_examples=400, deadline=None)
@given(_replies)
def test_parse_raises_only_parse_errors_on_arbitrary_text(text):
    for options in ({}, {"mode": "smart_resize", "image": FULL_HD}):
        try:
            reply = parse(text, **options)
        except InvalidAction:
            continue  # ParseError is one; nothing else may escape
        assert reply.actions and reply.raw == text


@given(
    st.integers(0, GRID_SIZE),
    st.integers(0, GRID_SIZE),
    st.sampled_from(["({},{})", "[{}, {}]", "<point>{} {}</point>", "{} {}"]),
)
def test_grid_points_map_to_value_over_1000(x, y, form):
    action = action_of(f"Action: click(start_box='{form.format(x, y)}')")
    assert normalized(action.inputs.point) == (x / 1000, y / 1000)


@st.composite
def _image_and_point(draw):
    width = draw(st.integers(56, 4000))
    height = draw(st.integers(max(56, width // 100), min(4000, width * 100)))
    seen = smart_resize(width, height)
    x, y = draw(st.integers(0, seen.width)), draw(st.integers(0, seen.height))
    return ImageSpace(width, height), seen, x, y


@given(_image_and_point())
def test_smart_resize_points_map_to_value_over_resized_side(case):
    image, seen, x, y = case
    action = action_of(f"Action: click(start_box='({x},{y})')", mode="smart_resize", image=image)
    assert normalized(action.inputs.point) == (x / seen.width, y / seen.height)


# --- exact grid arithmetic ----------------------------------------------------------------------


@given(st.integers(0, GRID_SIZE), st.integers(0, GRID_SIZE), st.integers(1, 8000), st.integers(1, 8000),
       st.sampled_from([1, 1.25, 1.5, 2]))
@example(575, 575, 800, 800, 1)  # in floating point 0.575 × 800 is 459.99…: row 459, not 460
@example(145, 285, 800, 800, 1)
@example(290, 565, 800, 800, 1)
@example(175, 350, 1440, 1440, 1)
@example(575, 700, 1440, 1440, 1)
@settings(max_examples=500)
def test_a_grid_value_k_of_a_screen_of_n_pixels_lands_on_floor_k_n_over_1000(
        kx: int, ky: int, width: int, height: int, scale: float) -> None:
    screen = Screen(width, height, scale)
    (action,) = parse(f"click(start_box='({kx},{ky})')").actions
    point = action.inputs.point.resolve(screen)
    pw, ph = screen.physical_size
    # The last grid value, 1000, is the screen's far edge: its last pixel.
    assert (point.x, point.y) == (min(kx * pw // GRID_SIZE, pw - 1), min(ky * ph // GRID_SIZE, ph - 1))


@pytest.mark.parametrize(("value", "size"), [(k, 800) for k in (145, 285, 290, *range(565, 581))]
                         + [(k, 1440) for k in (175, 350, 575, 700)])
def test_the_grid_values_float_scaling_got_wrong_land_exactly(value: int, size: int) -> None:
    (action,) = parse(f"click(start_box='({value},{value})')").actions
    point = action.inputs.point.resolve(Screen(size, size))
    assert point.x == point.y == value * size // GRID_SIZE


@given(st.integers(0, 2 * GRID_SIZE), st.integers(0, 2 * GRID_SIZE), st.integers(1, 8000))
def test_a_box_centre_on_the_grid_lands_exactly_too(a: int, b: int, width: int) -> None:
    # A box's centre falls on half-steps of the grid: (a + b) / 2 of 1000.
    x1, x2 = sorted((a // 2, b // 2))
    (action,) = parse(f"click(start_box='({x1},0,{x2},10)')").actions
    point = action.inputs.point.resolve(Screen(width, 100))
    assert point.x == min((x1 + x2) * width // (2 * GRID_SIZE), width - 1)
