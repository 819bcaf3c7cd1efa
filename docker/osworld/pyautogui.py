"""vdesk's stand-in for pyautogui inside the osworld desktop (not PyAutoGUI itself: PyPI is not
reachable from the image build). It covers what OSWorld's tasks run in their own
``python -c "import pyautogui; ..."`` steps — keys, hotkeys, typing, the pointer, the screen
size — by calling xdotool, with the argument spellings of pyautogui. Only X11 is supported.
"""

import subprocess
import time

FAILSAFE = True     # kept for scripts that set it; nothing here moves to a corner on its own
PAUSE = 0.1         # seconds after each call, as in pyautogui
MINIMUM_DURATION = 0.1

# pyautogui's key names that are not X keysyms already
_KEYS = {
    "enter": "Return", "return": "Return", "\n": "Return", "esc": "Escape", "escape": "Escape",
    "tab": "Tab", "\t": "Tab", "space": "space", " ": "space", "backspace": "BackSpace",
    "delete": "Delete", "del": "Delete", "insert": "Insert", "home": "Home", "end": "End",
    "pageup": "Prior", "pgup": "Prior", "pagedown": "Next", "pgdn": "Next",
    "up": "Up", "down": "Down", "left": "Left", "right": "Right",
    "ctrl": "ctrl", "ctrlleft": "Control_L", "ctrlright": "Control_R",
    "shift": "shift", "shiftleft": "Shift_L", "shiftright": "Shift_R",
    "alt": "alt", "altleft": "Alt_L", "altright": "Alt_R", "option": "alt",
    "win": "super", "winleft": "Super_L", "winright": "Super_R", "command": "super", "super": "super",
    "capslock": "Caps_Lock", "numlock": "Num_Lock", "scrolllock": "Scroll_Lock",
    "printscreen": "Print", "prtsc": "Print", "pause": "Pause", "apps": "Menu", "menu": "Menu",
    "volumeup": "XF86AudioRaiseVolume", "volumedown": "XF86AudioLowerVolume", "volumemute": "XF86AudioMute",
    "playpause": "XF86AudioPlay", "nexttrack": "XF86AudioNext", "prevtrack": "XF86AudioPrev",
}
_BUTTONS = {"left": "1", "primary": "1", "middle": "2", "right": "3", "secondary": "3"}


def _xdotool(*args):
    subprocess.run(["xdotool", *[str(a) for a in args]], check=True, timeout=60)


def _done():
    if PAUSE:
        time.sleep(PAUSE)


def _key(name):
    name = str(name)
    lowered = name.lower()
    if lowered in _KEYS:
        return _KEYS[lowered]
    if len(lowered) > 1 and lowered[0] == "f" and lowered[1:].isdigit():
        return lowered.upper()
    return name


def size():
    out = subprocess.run(["xdotool", "getdisplaygeometry"], capture_output=True, text=True, check=True, timeout=10)
    width, height = (int(v) for v in out.stdout.split())
    return width, height


def position():
    out = subprocess.run(["xdotool", "getmouselocation", "--shell"], capture_output=True, text=True,
                         check=True, timeout=10)
    values = dict(line.split("=", 1) for line in out.stdout.split())
    return int(values["X"]), int(values["Y"])


def _point(x, y):
    if isinstance(x, (tuple, list)):
        x, y = x[0], x[1]
    here = position()
    return int(here[0] if x is None else x), int(here[1] if y is None else y)


def moveTo(x=None, y=None, duration=0.0, tween=None, _pause=True, **_):
    x, y = _point(x, y)
    _xdotool("mousemove", "--sync", x, y)
    if _pause:
        _done()


def moveRel(xOffset=0, yOffset=0, duration=0.0, **_):
    x, y = position()
    moveTo(x + int(xOffset or 0), y + int(yOffset or 0))


move = moveRel


def mouseDown(x=None, y=None, button="left", **_):
    if x is not None or y is not None:
        moveTo(x, y, _pause=False)
    _xdotool("mousedown", _BUTTONS[str(button).lower()])
    _done()


def mouseUp(x=None, y=None, button="left", **_):
    if x is not None or y is not None:
        moveTo(x, y, _pause=False)
    _xdotool("mouseup", _BUTTONS[str(button).lower()])
    _done()


def click(x=None, y=None, clicks=1, interval=0.0, button="left", duration=0.0, **_):
    if x is not None or y is not None:
        moveTo(x, y, _pause=False)
    delay = max(1, int(float(interval) * 1000))
    _xdotool("click", "--repeat", int(clicks), "--delay", delay, _BUTTONS[str(button).lower()])
    _done()


def doubleClick(x=None, y=None, interval=0.0, button="left", **_):
    click(x, y, clicks=2, interval=interval, button=button)


def tripleClick(x=None, y=None, interval=0.0, button="left", **_):
    click(x, y, clicks=3, interval=interval, button=button)


def rightClick(x=None, y=None, **_):
    click(x, y, button="right")


def middleClick(x=None, y=None, **_):
    click(x, y, button="middle")


def dragTo(x=None, y=None, duration=0.0, button="left", **_):
    _xdotool("mousedown", _BUTTONS[str(button).lower()])
    moveTo(x, y, _pause=False)
    _xdotool("mouseup", _BUTTONS[str(button).lower()])
    _done()


def dragRel(xOffset=0, yOffset=0, duration=0.0, button="left", **_):
    here = position()
    dragTo(here[0] + int(xOffset), here[1] + int(yOffset), button=button)


def scroll(clicks, x=None, y=None, **_):
    if x is not None or y is not None:
        moveTo(x, y, _pause=False)
    clicks = int(clicks)
    if clicks:
        _xdotool("click", "--repeat", abs(clicks), "4" if clicks > 0 else "5")
    _done()


vscroll = scroll


def hscroll(clicks, x=None, y=None, **_):
    if x is not None or y is not None:
        moveTo(x, y, _pause=False)
    clicks = int(clicks)
    if clicks:
        _xdotool("click", "--repeat", abs(clicks), "7" if clicks > 0 else "6")
    _done()


def keyDown(key, **_):
    _xdotool("keydown", _key(key))
    _done()


def keyUp(key, **_):
    _xdotool("keyup", _key(key))
    _done()


def press(keys, presses=1, interval=0.0, **_):
    keys = [keys] if isinstance(keys, str) else list(keys)
    for _ in range(int(presses)):
        for key in keys:
            _xdotool("key", "--clearmodifiers", _key(key))
            if interval:
                time.sleep(float(interval))
    _done()


def hotkey(*keys, interval=0.0, **_):
    if len(keys) == 1 and isinstance(keys[0], (list, tuple)):
        keys = tuple(keys[0])
    _xdotool("key", "--clearmodifiers", "+".join(_key(k) for k in keys))
    _done()


def typewrite(message, interval=0.0, **_):
    if isinstance(message, (list, tuple)):
        for key in message:
            press(key, interval=interval)
        return
    delay = max(1, int(float(interval) * 1000))
    _xdotool("type", "--delay", delay, "--", str(message))
    _done()


write = typewrite


def screenshot(imageFilename=None, region=None):
    from PIL import ImageGrab

    image = ImageGrab.grab(bbox=None if region is None else
                           (region[0], region[1], region[0] + region[2], region[1] + region[3]), xdisplay="")
    if imageFilename:
        image.save(imageFilename)
    return image


def sleep(seconds):
    time.sleep(float(seconds))
