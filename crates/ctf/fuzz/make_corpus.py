#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (run from crates/ctf/fuzz)."""
import os
import struct

TSDL = open("../tests/common/kernel.tsdl", "rb").read()
UUID = bytes.fromhex("2a6422d06cee11e08c08cb07d7b3a564")


def write(target, name, data):
    os.makedirs(f"corpus/{target}", exist_ok=True)
    with open(f"corpus/{target}/{name}", "wb") as f:
        f.write(data)


def meta_packets(text, chunk=200):
    out = b""
    for i in range(0, len(text), chunk):
        part = text[i:i + chunk]
        content = (37 + len(part)) * 8
        out += struct.pack("<I16sIIIBBBBB", 0x75D11D57, UUID, 0, content, content + 64,
                           0, 0, 0, 1, 8) + part + b"\0" * 8
    return out


# --- metadata ---
write("metadata", "kernel.tsdl", TSDL)
write("metadata", "kernel.packetized", meta_packets(TSDL))
write("metadata", "small.tsdl", b"""/* CTF 1.8 */
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
trace { major = 1; minor = 8; byte_order = be; packet.header := struct { uint32_t magic; }; };
stream { event.header := struct { uint32_t id; }; };
event { name = "e"; id = 0; fields := struct { uint32_t n; string s[n]; }; };
""")
U = '{"type":"fixed-length-unsigned-integer","length":%d,"byte-order":"little-endian","alignment":8%s}'
frags = [
    '{"type":"preamble","version":2,"uuid":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}',
    '{"type":"trace-class","packet-header-field-class":{"type":"structure","member-classes":['
    '{"name":"magic","field-class":' + U % (32, ',"roles":["packet-magic-number"]') + '},'
    '{"name":"sid","field-class":' + U % (8, ',"roles":["data-stream-class-id"]') + '}]}}',
    '{"type":"clock-class","id":"mono","frequency":1000000000}',
    '{"type":"data-stream-class","id":0,"default-clock-class-id":"mono",'
    '"event-record-header-field-class":{"type":"structure","member-classes":['
    '{"name":"id","field-class":' + U % (16, ',"roles":["event-record-class-id"]') + '},'
    '{"name":"ts","field-class":' + U % (64, ',"roles":["default-clock-timestamp"]') + '}]}}',
    '{"type":"event-record-class","id":0,"data-stream-class-id":0,"name":"ev",'
    '"payload-field-class":{"type":"structure","member-classes":['
    '{"name":"n","field-class":' + U % (8, '') + '},'
    '{"name":"s","field-class":{"type":"null-terminated-string"}},'
    '{"name":"d","field-class":{"type":"dynamic-length-array","length-field-location":'
    '{"origin":"event-record-payload","path":["n"]},"element-field-class":'
    '{"type":"variable-length-signed-integer"}}},'
    '{"name":"o","field-class":{"type":"optional","selector-field-location":{"path":["n"]},'
    '"selector-field-ranges":[[1,3]],"field-class":{"type":"static-length-blob","length":2}}}]}}',
]
write("metadata", "ctf2.json", "".join("\x1e" + f + "\n" for f in frags).encode())

# --- packet (metadata: tests/common/kernel.tsdl) ---


def packet(seq, begin, end, body, discarded=0, pad=12):
    content = (84 + len(body)) * 8
    hdr = struct.pack("<I16sIQQQQQQQI", 0xC1FC1FC1, UUID, 0, 0, begin, end, content,
                      content + pad * 8, seq, discarded, 0)
    assert len(hdr) == 84
    return hdr + body + b"\0" * pad


def compact(eid, ts, payload):
    return struct.pack("<I", eid | (ts << 5)) + payload


def ext(eid, ts, payload):
    return b"\x1f" + struct.pack("<IQ", eid, ts) + payload


sched = b"swapper/0".ljust(16, b"\0") + struct.pack("<ii", 0, 1) + b"bash\0" + struct.pack("<i", 42)
openat = struct.pack("<i", -100) + b"/etc/passwd\0" + struct.pack("<i", 0)
sendmsg = struct.pack("<I", 2) + b"hi" + struct.pack("<Hii", 2, 3, 4)
tag_i = b"\0" + struct.pack("<i", -7)
tag_s = b"\x01s\0"
tag_a = b"\x02" + struct.pack("<HHH", 1, 2, 3)
bits = struct.pack("<HdH", 6 | (0x1abc << 3), 0.5, 2) + b"a\0bc\0"
body = (compact(0, 1100, sched) + compact(1, 1200, openat) + compact(2, 1300, sendmsg)
        + compact(3, 1400, tag_i) + compact(3, 1500, tag_s) + compact(3, 1550, tag_a)
        + compact(4, 1600, bits) + ext(5, 1 << 40, b""))
write("packet", "all_events", packet(0, 1000, 2000, body))
write("packet", "two_packets", packet(0, 1000, 2000, compact(1, 1200, openat))
      + packet(3, 3000, 4000, compact(5, 3100, b"") + ext(0, 3200, sched), discarded=5))
