"""A static HTML report of a run: per episode a film strip with the actions drawn on the frames
(click markers, drag arrows, typed text, keys), the checks, and an animated GIF.

    write_report(Path("runs/eval"))   # → runs/eval/report.html (+ runs/eval/report/ assets)

The page and its pictures sit beside the run, linked relatively, so the folder can be moved,
archived or served as it is.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from vdesk.actions import ActionType, BaseAction, Coordinates
from vdesk.coords import ImageSpace, Screen
from vdesk.errors import InvalidAction
from vdesk.harness.record import FINAL_FRAME, VIDEO_FILE, Outcome, Run, StepRecord, episode_folders, load_run

REPORT_FILE, ASSETS_DIR = "report.html", "report"
GIF_WIDTH = 640
GIF_STEP_MS, GIF_FINAL_MS = 900, 2000
CLICK, DRAG, TEXT_BG, SCROLL = (255, 64, 64), (255, 170, 0), (20, 20, 20), (64, 160, 255)
FONT_CANDIDATES = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "DejaVuSans.ttf")

Point = tuple[float, float]


@dataclass(frozen=True)
class Episode:
    """One episode's report parts, as paths relative to the report's folder."""

    run: Run
    frames: list[str]          # annotated frame per step (of those whose frame is there)
    final: str | None
    gif: str | None
    video: str | None = None   # the episode's video.mp4, when it was recorded
    shown: tuple[StepRecord, ...] = ()  # the step of each frame, in order

    @property
    def steps(self) -> int:
        """Steps as the results table counts them: a last reply with no actions is none."""
        return self.run.outcome.steps if self.run.outcome else sum(bool(step.actions) for step in self.run.steps)


def write_report(run_dir: str | Path) -> Path:
    """Write ``report.html`` for a run (an episode folder or a suite run); returns its path."""
    run_dir = Path(run_dir)
    assets = run_dir / ASSETS_DIR
    assets.mkdir(exist_ok=True)
    episodes = [_episode(load_run(folder), run_dir, assets) for folder in episode_folders(run_dir)]
    path = run_dir / REPORT_FILE
    path.write_text(render_html(run_dir.name, episodes), encoding="utf-8")
    return path


# -- pictures ---------------------------------------------------------------------------------
def _episode(run: Run, run_dir: Path, assets: Path) -> Episode:
    prefix = run.task.id
    space = ImageSpace(*run.info.image_size)
    frames: list[Image.Image] = []
    names: list[str] = []
    shown: list[StepRecord] = []
    for step in run.steps:
        frame_path = run.folder / step.frame
        if not frame_path.is_file():
            continue
        with Image.open(frame_path) as opened:
            annotated = annotate(opened.convert("RGB"), step.actions, space)
        name = f"{ASSETS_DIR}/{prefix}-step-{step.step:04d}.png"
        annotated.save(run_dir / name, compress_level=6)
        frames.append(annotated)
        names.append(name)
        shown.append(step)
    final_path = run.folder / FINAL_FRAME
    final = _relative(final_path, run_dir) if final_path.is_file() else None
    gif = _gif(frames, final_path if final else None, assets / f"{prefix}.gif")
    video_path = run.folder / VIDEO_FILE
    video = _relative(video_path, run_dir) if video_path.is_file() else None
    return Episode(run, names, final, _relative(gif, run_dir) if gif else None, video, tuple(shown))


def annotate(frame: Image.Image, actions: Iterable[BaseAction], space: ImageSpace) -> Image.Image:
    """Draw a step's actions on the frame the agent saw: numbered click markers, drag arrows
    (also for a press … release pair), scroll arrows, and a caption of typed text and keys."""
    image = frame.copy()
    draw = ImageDraw.Draw(image)
    screen = Screen(image.width, image.height)
    captions: list[str] = []
    pressed: Point | None = None
    for number, action in enumerate(actions, start=1):
        point = _point(action.inputs.point, screen, space)
        kind = action.type
        if kind in (ActionType.CLICK, ActionType.DOUBLE_CLICK, ActionType.TRIPLE_CLICK,
                    ActionType.RIGHT_CLICK, ActionType.MIDDLE_CLICK) and point:
            _click_marker(draw, point, number, rings={ActionType.DOUBLE_CLICK: 2, ActionType.TRIPLE_CLICK: 3}.get(kind, 1))
            if kind is not ActionType.CLICK:
                captions.append(f"{number}. {kind.value}")
        elif kind is ActionType.DRAG:
            start, end = _point(action.inputs.start, screen, space), _point(action.inputs.end, screen, space)
            if start and end:
                _arrow(draw, start, end, DRAG, number)
        elif kind is ActionType.MOUSE_DOWN:
            pressed = point or pressed
            if point:
                _dot(draw, point, DRAG)
        elif kind is ActionType.MOUSE_UP and pressed and point:
            _arrow(draw, pressed, point, DRAG, number)
            pressed = None
        elif kind is ActionType.MOUSE_MOVE and point:
            _dot(draw, point, DRAG if pressed else CLICK)
        elif kind is ActionType.SCROLL:
            target = point or (image.width / 2, image.height / 2)
            _scroll_arrow(draw, target, action.inputs.direction or "down", number)
        captions += _caption(number, action)
    if captions:
        _caption_box(draw, image, captions)
    return image


def _point(coordinates: Coordinates | None, screen: Screen, space: ImageSpace) -> Point | None:
    """Where coordinates land on the frame (the frame is the image the agent saw)."""
    if coordinates is None:
        return None
    try:
        resolved = coordinates.resolve(screen, space)
    except InvalidAction:
        return None  # an out-of-screen point failed at run time too; nothing to draw
    return (resolved.x + 0.5, resolved.y + 0.5)


def _caption(number: int, action: BaseAction) -> list[str]:
    inputs = action.inputs
    if action.type is ActionType.TYPE:
        return [f"{number}. type {inputs.content!r}"]
    if action.type in (ActionType.HOTKEY, ActionType.PRESS, ActionType.RELEASE, ActionType.HOLD_KEY):
        key = inputs.key if isinstance(inputs.key, str) else "+".join(inputs.key or [])
        return [f"{number}. {action.type.value} {key}"]
    if action.type in (ActionType.FINISHED, ActionType.CALL_USER):
        return [f"{number}. {action.type.value}" + (f": {inputs.content}" if inputs.content else "")]
    if action.type is ActionType.WAIT:
        return [f"{number}. wait {inputs.time if inputs.time is not None else 5:g} s"]
    return []


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    for candidate in FONT_CANDIDATES:
        try:
            return ImageFont.truetype(candidate, size)
        except OSError:
            continue
    return ImageFont.load_default()


def _click_marker(draw: ImageDraw.ImageDraw, point: Point, number: int, rings: int = 1) -> None:
    x, y = point
    for ring in range(rings):
        radius = 10 + 5 * ring
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), outline=CLICK, width=3)
    draw.line((x - 4, y, x + 4, y), fill=CLICK, width=2)
    draw.line((x, y - 4, x, y + 4), fill=CLICK, width=2)
    _badge(draw, (x + 12, y - 24), str(number), CLICK)


def _dot(draw: ImageDraw.ImageDraw, point: Point, colour: tuple[int, int, int]) -> None:
    x, y = point
    draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=colour)


def _arrow(draw: ImageDraw.ImageDraw, start: Point, end: Point, colour: tuple[int, int, int], number: int) -> None:
    draw.line((*start, *end), fill=colour, width=4)
    _dot(draw, start, colour)
    angle = math.atan2(end[1] - start[1], end[0] - start[0])
    head = [end] + [(end[0] - 16 * math.cos(angle + side), end[1] - 16 * math.sin(angle + side)) for side in (0.45, -0.45)]
    draw.polygon(head, fill=colour)
    _badge(draw, (start[0] + 8, start[1] - 26), str(number), colour)


def _scroll_arrow(draw: ImageDraw.ImageDraw, point: Point, direction: str, number: int) -> None:
    dx, dy = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}[direction]
    _arrow(draw, point, (point[0] + 40 * dx, point[1] + 40 * dy), SCROLL, number)


def _badge(draw: ImageDraw.ImageDraw, at: Point, text: str, colour: tuple[int, int, int]) -> None:
    font = _font(14)
    box = draw.textbbox(at, text, font=font)
    draw.rounded_rectangle((box[0] - 4, box[1] - 2, box[2] + 4, box[3] + 2), radius=4, fill=colour)
    draw.text(at, text, fill=(255, 255, 255), font=font)


def _caption_box(draw: ImageDraw.ImageDraw, image: Image.Image, lines: list[str]) -> None:
    font = _font(16)
    text = "\n".join(line if len(line) <= 90 else line[:89] + "…" for line in lines[-6:])
    box = draw.multiline_textbbox((0, 0), text, font=font, spacing=4)
    height, width = box[3] - box[1] + 16, min(image.width - 16, box[2] - box[0] + 20)
    top = image.height - height - 8
    draw.rounded_rectangle((8, top, 8 + width, image.height - 8), radius=6, fill=TEXT_BG, outline=DRAG, width=2)
    draw.multiline_text((18, top + 6), text, fill=(255, 255, 255), font=font, spacing=4)


def _gif(frames: list[Image.Image], final: Path | None, path: Path) -> Path | None:
    """An animated GIF of the annotated steps, then the final frame held longer."""
    pictures = list(frames)
    if final is not None:
        with Image.open(final) as opened:
            pictures.append(opened.convert("RGB"))
    if not pictures:
        return None
    scale = min(1.0, GIF_WIDTH / pictures[0].width)
    size = (round(pictures[0].width * scale), round(pictures[0].height * scale))
    small = [p.resize(size, Image.Resampling.LANCZOS) for p in pictures]
    durations = [GIF_STEP_MS] * len(frames) + ([GIF_FINAL_MS] if final is not None else [])
    small[0].save(path, save_all=True, append_images=small[1:], duration=durations, loop=0, optimize=True)
    return path


def _relative(path: Path, base: Path) -> str:
    return path.resolve().relative_to(base.resolve()).as_posix()


# -- the page ---------------------------------------------------------------------------------
STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d2430; background: #f5f6f8; }
h1 { margin: 0 0 4px; } .muted { color: #667; }
table.summary { border-collapse: collapse; margin: 16px 0 28px; background: #fff; }
table.summary td, table.summary th { border: 1px solid #dde; padding: 4px 10px; text-align: left; }
section.episode { background: #fff; border: 1px solid #dde; border-radius: 8px; padding: 14px 18px; margin-bottom: 24px; }
.ok { color: #0a7d28; font-weight: 600; } .bad { color: #c0262d; font-weight: 600; }
.strip { display: flex; gap: 10px; overflow-x: auto; padding: 8px 0; }
figure { margin: 0; flex: 0 0 auto; } figure img { width: 240px; border: 1px solid #ccd; border-radius: 4px; }
figcaption { font-size: 12px; max-width: 240px; color: #445; }
.pictures { display: grid; grid-template-columns: 360px minmax(0, 1fr); gap: 14px; align-items: start; }
.gif img { width: 360px; border: 1px solid #ccd; border-radius: 4px; }
.video video { width: 640px; max-width: 100%; border: 1px solid #ccd; border-radius: 4px; }
ul.checks { margin: 6px 0; } code { background: #eef; padding: 0 3px; border-radius: 3px; }
"""

# The report's own health, readable from outside: how many pictures it has and how many loaded.
LOAD_PROBE = """<script>
window.addEventListener('load', () => {
  const images = Array.from(document.images);
  document.body.dataset.images = images.length;
  document.body.dataset.loaded = images.filter(i => i.complete && i.naturalWidth > 0).length;
});
</script>"""


def render_html(title: str, episodes: list[Episode]) -> str:
    passed = sum(bool(e.run.outcome and e.run.outcome.success) for e in episodes)
    rows = "".join(_summary_row(e) for e in episodes)
    body = "".join(_section(e) for e in episodes)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>vdesk report: {_e(title)}</title>
<style>{STYLE}</style></head>
<body>
<h1>vdesk report: {_e(title)}</h1>
<p class="muted">{passed} of {len(episodes)} episodes succeeded.</p>
<table class="summary"><tr><th>task</th><th>agent</th><th>status</th><th>success</th><th>steps</th><th>time</th></tr>{rows}</table>
{body}
{LOAD_PROBE}
</body></html>
"""


def _summary_row(episode: Episode) -> str:
    outcome = episode.run.outcome
    if outcome is None:
        return f"<tr><td><a href='#{_e(episode.run.task.id)}'>{_e(episode.run.task.id)}</a></td><td colspan=5>unfinished</td></tr>"
    return (f"<tr><td><a href='#{_e(outcome.task_id)}'>{_e(outcome.task_id)}</a></td><td>{_e(outcome.agent)}</td>"
            f"<td>{_e(outcome.status)}</td><td>{_verdict(outcome.success)}</td><td>{outcome.steps}</td>"
            f"<td>{outcome.elapsed_s:.2f} s</td></tr>")


def _section(episode: Episode) -> str:
    run, outcome = episode.run, episode.run.outcome
    checks = "".join(f"<li>{_verdict(c.passed)} <code>{_e(c.kind)}</code> {_e(c.detail)}</li>"
                     for c in (outcome.checks if outcome else []))
    figures = "".join(_figure(name, step) for name, step in zip(episode.frames, episode.shown))
    if episode.final:
        figures += f"<figure><img src='{_e(episode.final)}' alt='final frame'><figcaption>final frame</figcaption></figure>"
    gif = f"<div class='gif'><img src='{_e(episode.gif)}' alt='animation of the episode'></div>" if episode.gif else "<div></div>"
    video = ""
    if episode.video:
        video = (f"<div class='video'><video controls preload='metadata' src='{_e(episode.video)}'></video>"
                 f"<p class='muted'><a href='{_e(episode.video)}'>{_e(episode.video)}</a></p></div>")
    status = f"{_e(outcome.status)}, {_verdict(outcome.success)}" if outcome else "unfinished"
    extra = ""
    if outcome and (outcome.error or outcome.request):
        extra = f"<p>{_e(outcome.error or ('asked: ' + (outcome.request or '')))}</p>"
    if outcome and outcome.fork_s is not None:
        extra += f"<p class='muted'>{_e(_start_note(outcome))}</p>"
    if outcome and outcome.retry_note:
        moved = ", ".join(a.moved_to for a in outcome.attempts or [] if a.moved_to)
        extra += (f"<p class='muted'>{_e(outcome.retry_note)}"
                  f"{'; the lost try is in ' + _e(moved) if moved else ''}</p>")
    return f"""<section class="episode" id="{_e(run.task.id)}">
<h2>{_e(run.task.id)}</h2>
<p>{_e(run.task.instruction)}</p>
<p class="muted">agent {_e(run.info.agent)} · {status} · {episode.steps} step{'' if episode.steps == 1 else 's'}</p>{extra}
<ul class="checks">{checks}</ul>
<div class="pictures">{gif}<div class="strip">{figures}</div></div>{video}
</section>
"""


def _start_note(outcome: Outcome) -> str:
    """Where a forked episode's desktop came from, and what it took."""
    setup = "" if outcome.setup_s is None else f"; the task's one setup took {outcome.setup_s:.2f} s"
    taken = "" if outcome.checkpoint_s is None else f", its checkpoint {outcome.checkpoint_s:.2f} s"
    return f"started from a fork of {outcome.forked_from or 'a checkpoint'} in {outcome.fork_s:.2f} s{setup}{taken}"


def _figure(name: str, step: StepRecord) -> str:
    thought = f" — {step.thought}" if step.thought else ""
    if step.actions:
        caption = f"step {step.step}: " + ", ".join(a.type.value for a in step.actions) + thought
    else:  # the reply that ended the episode (no_actions): what the agent saw, not a step
        caption = "last reply: no actions, the episode ended" + thought
    return f"<figure><img src='{_e(name)}' alt='step {step.step}'><figcaption>{_e(caption[:200])}</figcaption></figure>"


def _verdict(success: bool) -> str:
    return "<span class='ok'>passed</span>" if success else "<span class='bad'>failed</span>"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
