#!/usr/bin/python3
"""vdesk-atspi: read the accessibility tree of every application on the desktop's AT-SPI bus.

``vdesk-atspi serve`` (how the controller runs it, in an exec session it keeps): one JSON
object of options a line on stdin, one tree a line on stdout, so neither Python's start nor
loading GLib's bindings (a few hundred ms on a busy machine) is paid per read.
``vdesk-atspi [OPTIONS]`` reads once. The tree is one JSON document:

  {"apps": [{"name": "soffice", "bus": ":1.3", "error": null, "nodes": [...]}, ...],
   "elapsed_ms": 132.0}

``nodes`` is flat, in document order; each node names its parent by index (-1 for the
application). Bounds are screen pixels of the X server (the controller maps them).

Why not one call per property per node (libatspi's way): every call is a D-Bus round trip,
about 0.5 ms each, so Calc alone took over a second. Here every request is sent
asynchronously and the replies are taken as they come, so the programs answer a whole level
of the tree at a time; and a node's subtree is read only when it is showing (a closed menu's
hundreds of items are not read unless asked), its state being asked first.

Options (one JSON object, argv[1]): max_depth, max_children, max_text, timeout (seconds, for
the whole read), hidden (read subtrees of nodes that are not showing too), apps (names to
read; empty: all), details (also read object attributes and actions: they cost as much
again, LibreOffice's attributes most).
"""
import json
import sys
import time

from gi.repository import Gio, GLib

ACCESSIBLE = "org.a11y.atspi.Accessible"
COMPONENT = "org.a11y.atspi.Component"
TEXT = "org.a11y.atspi.Text"
VALUE = "org.a11y.atspi.Value"
ACTION = "org.a11y.atspi.Action"
PROPERTIES = "org.freedesktop.DBus.Properties"
ROOT = "/org/a11y/atspi/accessible/root"
NULL_PATH = "/org/a11y/atspi/null"
# AT-SPI's state enumeration (atspi-constants.h), in order: bit i of the state set is STATES[i].
STATES = ("invalid", "active", "armed", "busy", "checked", "collapsed", "defunct", "editable", "enabled",
          "expandable", "expanded", "focusable", "focused", "has-tooltip", "horizontal", "iconified", "modal",
          "multi-line", "multiselectable", "opaque", "pressed", "resizable", "selectable", "selected",
          "sensitive", "showing", "single-line", "stale", "transient", "vertical", "visible",
          "manages-descendants", "indeterminate", "required", "truncated", "animated", "invalid-entry",
          "supports-autocompletion", "selectable-text", "is-default", "visited", "checkable", "has-popup",
          "read-only")
SHOWING = STATES.index("showing")
MANAGES_DESCENDANTS = STATES.index("manages-descendants")


def state_names(words):
    bits = 0
    for i, word in enumerate(words[:2]):
        bits |= word << (32 * i)
    return [name for i, name in enumerate(STATES) if bits >> i & 1]


class Reader:
    def __init__(self, bus, options):
        self.bus = bus
        self.max_depth = int(options.get("max_depth", 50))
        self.max_children = int(options.get("max_children", 1024))
        self.max_text = int(options.get("max_text", 2000))
        self.hidden = bool(options.get("hidden", False))
        self.details = bool(options.get("details", False))
        self.deadline = time.monotonic() + float(options.get("timeout", 5.0))
        self.loop = GLib.MainLoop()
        self.pending = 0
        self.outstanding = {}  # app bus name -> calls not yet answered

    def call(self, app, path, interface, method, args, on_reply):
        timeout_ms = max(1, int((self.deadline - time.monotonic()) * 1000))
        self.pending += 1
        self.outstanding[app["bus"]] = self.outstanding.get(app["bus"], 0) + 1

        def done(connection, result, _data):
            self.pending -= 1
            self.outstanding[app["bus"]] -= 1
            try:
                reply = connection.call_finish(result).unpack()
            except GLib.Error as error:
                reply = error
            if time.monotonic() < self.deadline:
                on_reply(reply)
            if self.pending == 0:
                self.loop.quit()

        self.bus.call(app["bus"], path, interface, method, args, None, Gio.DBusCallFlags.NO_AUTO_START,
                      timeout_ms, None, done, None)

    def node(self, app, path, parent, depth):
        node = {"parent": parent, "role": "", "name": "", "description": "", "states": [], "bounds": None,
                "text": None, "value": None, "attributes": {}, "actions": [], "children": 0}
        index = len(app["nodes"])
        app["nodes"].append(node)

        def on_state(reply):
            if isinstance(reply, GLib.Error):
                node["error"] = reply.message
                return
            node["states"] = state_names(reply[0])
            showing = "showing" in node["states"]
            if not (showing or self.hidden or depth <= 1):
                return  # not on screen: its role and name are read, not its subtree
            self.call(app, path, PROPERTIES, "GetAll", GLib.Variant("(s)", (ACCESSIBLE,)), on_properties)
            self.call(app, path, ACCESSIBLE, "GetInterfaces", None, on_interfaces)
            if self.details:
                self.call(app, path, ACCESSIBLE, "GetAttributes", None, on_attributes)

        def on_properties(reply):
            if isinstance(reply, GLib.Error):
                return
            props = reply[0]
            node["name"] = props.get("Name") or ""
            node["description"] = props.get("Description") or ""
            node["children"] = int(props.get("ChildCount") or 0)
            maybe_children()

        def on_interfaces(reply):
            interfaces = [] if isinstance(reply, GLib.Error) else reply[0]
            showing = "showing" in node["states"]
            if COMPONENT in interfaces and showing:
                self.call(app, path, COMPONENT, "GetExtents", GLib.Variant("(u)", (0,)), on_extents)
            if not showing:
                return
            if TEXT in interfaces:
                self.call(app, path, TEXT, "GetText", GLib.Variant("(ii)", (0, self.max_text)), on_text)
            if VALUE in interfaces:
                self.call(app, path, PROPERTIES, "GetAll", GLib.Variant("(s)", (VALUE,)), on_value)
            if ACTION in interfaces and self.details:
                self.call(app, path, ACTION, "GetActions", None, on_actions)

        def on_role(reply):
            if not isinstance(reply, GLib.Error):
                node["role"] = reply[0]

        def on_extents(reply):
            if not isinstance(reply, GLib.Error):
                node["bounds"] = list(reply[0])

        def on_text(reply):
            if not isinstance(reply, GLib.Error):
                node["text"] = reply[0].replace("\ufffc", "").replace("\ufffd", "")

        def on_value(reply):
            if not isinstance(reply, GLib.Error):
                props = reply[0]
                node["value"] = {key: props.get(prop) for key, prop in
                                 (("value", "CurrentValue"), ("min", "MinimumValue"),
                                  ("max", "MaximumValue"), ("step", "MinimumIncrement"))}

        def on_actions(reply):
            if not isinstance(reply, GLib.Error):
                node["actions"] = [{"name": a[0], "description": a[1], "keybinding": a[2]} for a in reply[0]]

        def on_attributes(reply):
            if not isinstance(reply, GLib.Error):
                node["attributes"] = dict(reply[0])

        def maybe_children():
            if "manages-descendants" in node["states"] or depth >= self.max_depth or node["children"] <= 0:
                return
            if node["children"] > self.max_children:
                node["children_cut"] = node["children"]
                return
            self.call(app, path, ACCESSIBLE, "GetChildren", None, on_children)

        def on_children(reply):
            if isinstance(reply, GLib.Error):
                return
            for bus_name, child_path in reply[0][: self.max_children]:
                if child_path != NULL_PATH and bus_name == app["bus"]:
                    self.node(app, child_path, index, depth + 1)

        self.call(app, path, ACCESSIBLE, "GetState", None, on_state)
        self.call(app, path, ACCESSIBLE, "GetRoleName", None, on_role)

    def read(self, apps):
        for app in apps:
            self.node(app, ROOT, -1, 0)
        remaining = self.deadline - time.monotonic()
        if self.pending and remaining > 0:
            GLib.timeout_add(int(remaining * 1000) + 1, self.loop.quit)
            self.loop.run()
        for app in apps:
            late = self.outstanding.get(app["bus"], 0)
            if late:
                app["error"] = (f"{app['name'] or app['bus']} did not answer {late} accessibility "
                                f"request(s) within the time limit")


def connect():
    session = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    reply = session.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                              GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 2000, None)
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    return Gio.DBusConnection.new_for_address_sync(reply.unpack()[0], flags, None, None)


def program_of(bus, bus_name):
    """The name of the process behind a bus connection (for an application that does not answer)."""
    try:
        pid = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                            "GetConnectionUnixProcessID", GLib.Variant("(s)", (bus_name,)), None,
                            Gio.DBusCallFlags.NONE, 1000, None).unpack()[0]
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip() or bus_name
    except (GLib.Error, OSError):
        return bus_name


def applications(bus, wanted):
    reply = bus.call_sync("org.a11y.atspi.Registry", ROOT, ACCESSIBLE, "GetChildren", None, None,
                          Gio.DBusCallFlags.NONE, 2000, None)
    apps = []
    for bus_name, _path in reply.unpack()[0]:
        try:
            name = bus.call_sync(bus_name, ROOT, PROPERTIES, "Get", GLib.Variant("(ss)", (ACCESSIBLE, "Name")),
                                 None, Gio.DBusCallFlags.NO_AUTO_START, 1000, None).unpack()[0]
        except GLib.Error as error:
            program = program_of(bus, bus_name)
            apps.append({"name": program, "bus": bus_name, "nodes": [],
                         "error": f"{program} did not answer the accessibility bus: {error.message}"})
            continue
        if not wanted or name in wanted:
            apps.append({"name": name, "bus": bus_name, "error": None, "nodes": []})
    return apps


def read_once(bus, options):
    started = time.monotonic()
    try:
        bus = bus if bus is not None and not bus.is_closed() else connect()
        apps = applications(bus, set(options.get("apps") or ()))
    except GLib.Error as error:
        return None, {"error": f"the accessibility bus is not reachable: {error.message}"}
    reader = Reader(bus, options)
    reader.read([app for app in apps if app["error"] is None])
    return bus, {"apps": apps, "elapsed_ms": (time.monotonic() - started) * 1000}


def main():
    if sys.argv[1:2] == ["serve"]:
        bus = None
        for line in sys.stdin:
            try:
                options = json.loads(line)
            except ValueError:
                options = None
            if not isinstance(options, dict):
                reply = {"error": "a request must be one JSON object of options"}
            else:
                bus, reply = read_once(bus, options)
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
        return 0
    _bus, reply = read_once(None, json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})
    print(json.dumps(reply))
    return 0 if "error" not in reply else 1


if __name__ == "__main__":
    sys.exit(main())
