#!/usr/bin/env python3
"""Write the fmt-*.bin message-set fixtures and the fuzz_msgset seed corpus.

The generated files are committed; run this again only to change them, then
update tests/data/README (it prints the offsets).  Encoding follows
include/klog/format.h: big-endian lengths, zlib CRC-32 of the payload, gzip
wrappers as magic-1 entries with attributes 1.  The gzip streams have mtime 0,
so the output is the same on every run with the same zlib.
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "fuzz", "corpus", "fuzz_msgset")


def m0(payload):
    return struct.pack(">IBI", 5 + len(payload), 0,
                       zlib.crc32(payload)) + payload


def m1(payload, attrs=0):
    return struct.pack(">IBBI", 6 + len(payload), 1, attrs,
                       zlib.crc32(payload)) + payload


def gzip(data):
    c = zlib.compressobj(6, zlib.DEFLATED, 15 + 16)
    return c.compress(data) + c.flush()


def wrap(inner):
    return m1(gzip(inner), attrs=1)


def flip_first_payload_bit(entry):
    """The entry with bit 0 of its first payload byte flipped, CRC kept."""
    hdr = 4 + (5 if entry[4] == 0 else 6)
    b = bytearray(entry)
    b[hdr] ^= 0x01
    return bytes(b)


def layout(name, entries):
    pos = 0
    print(name)
    for label, e in entries:
        print("  %4d (0x%02x) %4d bytes  %s" % (pos, pos, len(e), label))
        pos += len(e)
    print("  total %d bytes" % pos)
    return b"".join(e for _, e in entries)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    inner = m1(b"one") + m1(b"two") + m1(b"three")
    valid = layout("fmt-valid.bin", [
        ("magic 0 'test'", m0(b"test")),
        ("magic 1 codec none 'hello'", m1(b"hello")),
        ("magic 0 empty payload", m0(b"")),
        ("gzip wrapper: magic 1 'one' 'two' 'three'", wrap(inner)),
        ("magic 0 'end'", m0(b"end")),
    ])
    crc = layout("fmt-crc.bin", [
        ("magic 0 'alpha'", m0(b"alpha")),
        ("magic 0 'bravo' stored as 'cravo' (bit flipped)",
         flip_first_payload_bit(m0(b"bravo"))),
        ("magic 0 'charlie'", m0(b"charlie")),
    ])
    truncated = layout("fmt-truncated.bin", [
        ("magic 0 'alpha'", m0(b"alpha")),
        ("magic 0 'bravo'", m0(b"bravo")),
        ("magic 0 'charlie' cut after 10 of 16 bytes", m0(b"charlie")[:10]),
    ])
    bad = bytearray(m0(b"bravo"))
    bad[4] = 2
    badmagic = layout("fmt-badmagic.bin", [
        ("magic 0 'alpha'", m0(b"alpha")),
        ("magic byte 2, 'bravo' with a good CRC", bytes(bad)),
        ("magic 0 'charlie'", m0(b"charlie")),
    ])
    gzcrc = layout("fmt-gzip-crc.bin", [
        ("gzip wrapper (good CRC): 'one', 'two' flipped to 'uwo', 'three'",
         wrap(m1(b"one") + flip_first_payload_bit(m1(b"two")) +
              m1(b"three"))),
        ("magic 0 'end'", m0(b"end")),
    ])
    write(os.path.join(HERE, "fmt-valid.bin"), valid)
    write(os.path.join(HERE, "fmt-crc.bin"), crc)
    write(os.path.join(HERE, "fmt-truncated.bin"), truncated)
    write(os.path.join(HERE, "fmt-badmagic.bin"), badmagic)
    write(os.path.join(HERE, "fmt-gzip-crc.bin"), gzcrc)

    os.makedirs(CORPUS, exist_ok=True)
    seeds = {
        "valid": valid,
        "crc": crc,
        "truncated": truncated,
        "badmagic": badmagic,
        "gzip-crc": gzcrc,
        "magic0-test": m0(b"test"),
        "magic1-test": m1(b"test"),
        "gzip-empty-inner": wrap(b""),
        "gzip-nested": wrap(wrap(m0(b"deep")) + m0(b"x")),
        "snappy": m1(b"\x82SNAPPY\x00", attrs=2),
        "many": b"".join(m0(bytes([i]) * i) for i in range(40)),
    }
    for name, data in seeds.items():
        write(os.path.join(CORPUS, name), data)


if __name__ == "__main__":
    main()
