"""Rename Chromium to "Google Chrome" in the strings of a Chromium locale pack (.pak, format 5),
so its windows are titled "… - Google Chrome" as OSWorld's activate_window steps look for.

Format 5: a header (version u32, encoding u8, 3 bytes padding, resource count u16, alias count
u16), then count+1 entries (id u16, offset u32; the last one marks the end), alias entries
(id u16, entry index u16), then the resources' bytes. Offsets are from the file's start.
"""

import struct
import sys

OLD, NEW = b"Chromium", b"Google Chrome"


def rename(data: bytes) -> bytes:
    version, encoding, count, aliases = struct.unpack_from("<IB3xHH", data, 0)
    if version != 5:
        raise SystemExit(f"pak format {version}, not 5")
    header = 12
    entries = [struct.unpack_from("<HI", data, header + 6 * i) for i in range(count + 1)]
    alias_table = data[header + 6 * (count + 1): header + 6 * (count + 1) + 4 * aliases]
    bodies = [data[entries[i][1]:entries[i + 1][1]].replace(OLD, NEW) for i in range(count)]
    start = header + 6 * (count + 1) + 4 * aliases
    table, offset = [], start
    for (resource, _), body in zip(entries, bodies):
        table.append(struct.pack("<HI", resource, offset))
        offset += len(body)
    table.append(struct.pack("<HI", entries[count][0], offset))
    return struct.pack("<IB3xHH", version, encoding, count, aliases) + b"".join(table) + alias_table + b"".join(bodies)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, "rb") as handle:
            renamed = rename(handle.read())
        with open(path, "wb") as handle:
            handle.write(renamed)
