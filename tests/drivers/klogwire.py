"""The klog wire protocol and message format, just enough for test clients.

Byte layouts as in klog-protocol(7) and klog-format(5): big-endian, a
request frame is size:4 api:2 version:2 correlation:4 body, a response
frame size:4 correlation:4 error:2 body; a string is int16 length + bytes.
"""

import gzip
import socket
import struct
import zlib

PRODUCE, FETCH, OFFSETS, METADATA = 0, 1, 4, 5
VERSION = 1
MAX_ENTRY_LENGTH = 1 << 30

WIRE_ERRORS = {
    -1: "UNKNOWN", 0: "NONE", 1: "OFFSET_OUT_OF_RANGE", 2: "INVALID_MESSAGE",
    3: "WRONG_PARTITION", 4: "INVALID_FETCH_SIZE", 5: "MESSAGE_TOO_LARGE",
    6: "INVALID_TOPIC", 7: "UNKNOWN_TOPIC", 8: "NOT_BOUNDARY",
    9: "STORAGE_ERROR", 10: "DISK_FULL", 11: "INVALID_REQUEST",
    12: "UNSUPPORTED_VERSION", 13: "UNKNOWN_API", 14: "REQUEST_TOO_LARGE",
    15: "UNSUPPORTED_CODEC", 16: "PARTIAL_MESSAGE",
}


def string(s):
    if isinstance(s, str):
        s = s.encode()
    return struct.pack(">h", len(s)) + s


def entry(payload):
    """One magic-0 entry."""
    return (struct.pack(">iBI", 5 + len(payload), 0,
                        zlib.crc32(payload)) + payload)


def message_set(payloads):
    return b"".join(entry(p) for p in payloads)


def gzip_entry(payloads):
    """One magic-1 gzip wrapper holding a set of magic-0 entries."""
    z = gzip.compress(message_set(payloads), compresslevel=1)
    return struct.pack(">iBBI", 6 + len(z), 1, 1, zlib.crc32(z)) + z


def request(api, corr, body, version=VERSION):
    return struct.pack(">ihhi", 8 + len(body), api, version, corr) + body


def produce(corr, parts, acks=-1, timeout_ms=10000):
    """parts: [(topic, partition, set_bytes)]."""
    body = struct.pack(">hii", acks, timeout_ms, len(parts))
    for topic, partition, mset in parts:
        body += string(topic) + struct.pack(">ii", partition, len(mset))
        body += mset
    return request(PRODUCE, corr, body)


def fetch(corr, parts, max_wait_ms=0, min_bytes=0):
    """parts: [(topic, partition, offset, max_bytes)]."""
    body = struct.pack(">iii", max_wait_ms, min_bytes, len(parts))
    for topic, partition, offset, max_bytes in parts:
        body += string(topic) + struct.pack(">iqi", partition, offset,
                                            max_bytes)
    return request(FETCH, corr, body)


def metadata(corr, topics=()):
    body = struct.pack(">i", len(topics))
    for t in topics:
        body += string(t)
    return request(METADATA, corr, body)


def offsets(corr, parts):
    """parts: [(topic, partition, time, max)]."""
    body = struct.pack(">i", len(parts))
    for topic, partition, time, mx in parts:
        body += string(topic) + struct.pack(">iqi", partition, time, mx)
    return request(OFFSETS, corr, body)


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes"
                                  % (len(buf), n))
        buf += chunk
    return bytes(buf)


def read_response(sock):
    """(correlation, error, body) of the next response frame."""
    size, corr, err = struct.unpack(">iih", recv_exact(sock, 10))
    if size < 6:
        raise ValueError("response size %d" % size)
    return corr, err, recv_exact(sock, size - 6)


class Reader:
    def __init__(self, body):
        self.b, self.i = body, 0

    def take(self, fmt):
        n = struct.calcsize(fmt)
        if self.i + n > len(self.b):
            raise ValueError("short body")
        v = struct.unpack_from(fmt, self.b, self.i)
        self.i += n
        return v if len(v) > 1 else v[0]

    def string(self):
        n = self.take(">h")
        if n < 0 or self.i + n > len(self.b):
            raise ValueError("bad string")
        s = self.b[self.i:self.i + n]
        self.i += n
        return s.decode("utf-8", "surrogateescape")

    def raw(self, n):
        if n < 0 or self.i + n > len(self.b):
            raise ValueError("bad size")
        s = self.b[self.i:self.i + n]
        self.i += n
        return s

    def done(self):
        if self.i != len(self.b):
            raise ValueError("%d bytes left over" % (len(self.b) - self.i))


def parse_produce_response(body):
    """[(topic, partition, error, offset)]."""
    r = Reader(body)
    out = []
    for _ in range(r.take(">i")):
        topic = r.string()
        partition, err, offset = r.take(">ihq")
        out.append((topic, partition, err, offset))
    r.done()
    return out


def parse_fetch_response(body):
    """[(topic, partition, error, log_start, log_end, set_bytes)]."""
    r = Reader(body)
    out = []
    for _ in range(r.take(">i")):
        topic = r.string()
        partition, err, start, end, size = r.take(">ihqqi")
        out.append((topic, partition, err, start, end, r.raw(size)))
    r.done()
    return out


def valid_prefix(data):
    """Bytes of data that are whole top-level entries with good CRCs, as
    the broker's recovery counts them (wrappers are not opened)."""
    pos = 0
    while pos + 5 <= len(data):
        length = struct.unpack_from(">I", data, pos)[0]
        magic = data[pos + 4]
        if magic > 1 or length > MAX_ENTRY_LENGTH:
            break
        hdr = 5 if magic == 0 else 6
        if length < hdr or pos + 4 + length > len(data):
            break
        if magic == 1 and data[pos + 5] & 3 == 3:
            break
        crc = struct.unpack_from(">I", data, pos + hdr)[0]
        if zlib.crc32(data[pos + 4 + hdr:pos + 4 + length]) != crc:
            break
        pos += 4 + length
    return pos


def connect(port, timeout=5):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s
