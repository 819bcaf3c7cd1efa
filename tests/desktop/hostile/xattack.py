#!/usr/bin/python3
"""A hostile X client run inside a desktop (python3 + ctypes + libX11, both in the image).

  xattack.py windows N     map N top-level windows, then sleep
  xattack.py title BYTES   map one window whose title is BYTES long, then sleep
  xattack.py flood SECONDS repaint the whole screen in changing colours for SECONDS
"""
import ctypes
import sys
import time

x11 = ctypes.CDLL("libX11.so.6")
x11.XOpenDisplay.restype = ctypes.c_void_p
x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
x11.XDefaultRootWindow.restype = ctypes.c_ulong
x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
x11.XCreateSimpleWindow.restype = ctypes.c_ulong
x11.XCreateSimpleWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int,
                                    ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_ulong]
x11.XMapWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
x11.XFlush.argtypes = [ctypes.c_void_p]
x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
x11.XInternAtom.restype = ctypes.c_ulong
x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
x11.XChangeProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                                ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
x11.XDefaultGC.restype = ctypes.c_void_p
x11.XDefaultGC.argtypes = [ctypes.c_void_p, ctypes.c_int]
x11.XSetForeground.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulong]
x11.XFillRectangle.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                               ctypes.c_uint, ctypes.c_uint]

display = x11.XOpenDisplay(None)
root = x11.XDefaultRootWindow(display)
what, amount = sys.argv[1], int(sys.argv[2])


def window(x, y, width, height):
    made = x11.XCreateSimpleWindow(display, root, x, y, width, height, 0, 0, 0x336699)
    x11.XMapWindow(display, made)
    return made


if what == "windows":
    for index in range(amount):
        window(index % 1000, index % 700, 40, 30)
        if index % 500 == 0:
            x11.XSync(display, 0)
    x11.XSync(display, 0)
    print("mapped", flush=True)
    time.sleep(3600)
elif what == "title":
    made = window(50, 50, 300, 200)
    title = b"T" * amount
    for name, kind in ((b"_NET_WM_NAME", b"UTF8_STRING"), (b"WM_NAME", b"STRING")):
        x11.XChangeProperty(display, made, x11.XInternAtom(display, name, 0), x11.XInternAtom(display, kind, 0),
                            8, 0, title, len(title))
    x11.XSync(display, 0)
    print("titled", flush=True)
    time.sleep(3600)
elif what == "flood":
    gc = x11.XDefaultGC(display, 0)
    end = time.monotonic() + amount
    colour = 0
    while time.monotonic() < end:
        colour = (colour + 0x010305) & 0xFFFFFF
        x11.XSetForeground(display, gc, colour)
        x11.XFillRectangle(display, root, gc, 0, 0, 4000, 4000)
        x11.XFlush(display)
        if colour == 0x010305:  # the first fill has reached the server
            x11.XSync(display, 0)
            print("flooding", flush=True)
    x11.XSync(display, 0)
