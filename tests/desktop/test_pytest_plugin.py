"""The pytest plugin: a `desktop` fixture for GUI-agent suites, and the frame of a failing test."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_the_desktop_fixture_gives_a_fresh_desktop_and_saves_the_frame_of_a_failure(pytester):
    pytester.makepyfile(test_agent="""
        def test_passes(desktop):
            assert desktop.screen.shot().size == (1024, 768)

        def test_session_desktop_is_shared(session_desktop):
            assert session_desktop.screen.shot().size == (1024, 768)

        def test_fails(desktop):
            desktop.programs.run(["xterm", "-title", "evidence"])
            desktop.windows.wait_for("evidence")
            assert False, "the agent did not finish"
    """)
    frames = pytester.path / "frames"
    result = pytester.runpytest_subprocess("--vdesk-size", "1024x768", "--vdesk-frames", str(frames))  # the plugin loads itself: it is installed
    result.assert_outcomes(passed=2, failed=1)
    saved = list(frames.glob("*test_fails*.png"))
    assert len(saved) == 1
    from PIL import Image
    assert Image.open(saved[0]).size == (1024, 768)
    result.stdout.fnmatch_lines(["*desktop frame saved to*"])
    # A suite of its own (no filters of ours): vdesk itself makes pytest print no warnings.
    assert "warning" not in result.stdout.str().lower(), result.stdout.str()


def test_a_bad_size_option_is_one_usage_error_before_any_test(pytester):
    pytester.makepyfile(test_agent="""
        def test_one(desktop):
            pass

        def test_two(desktop):
            pass
    """)
    for bad, said in [("abc", "invalid size 'abc'"), ("0x0", "outside 64x64")]:
        result = pytester.runpytest_subprocess("--vdesk-size", bad)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
        errors = result.stderr.str()
        assert said in errors and "Traceback" not in errors, errors
        assert "test_one" not in result.stdout.str()


def test_the_fixture_desktop_finds_and_waits_for_text_on_screen(pytester):
    pytester.makepyfile(test_agent="""
        import pytest
        from vdesk.errors import DesktopTimeout

        def test_reads_the_screen(desktop):
            desktop.programs.run(["xterm", "-geometry", "60x6+50+50", "-e", "sh", "-c", "sleep 1; echo Agent says done; sleep 60"])
            [box] = desktop.text.wait_for("Agent says done", timeout=30)
            assert desktop.text.find("Agent says") and box.bounds[0] >= 50
            with pytest.raises(DesktopTimeout, match="no text matching 'Agent failed'"):
                desktop.text.wait_for("Agent failed", timeout=2)
    """)
    result = pytester.runpytest_subprocess("--vdesk-size", "1024x768")
    result.assert_outcomes(passed=1)
