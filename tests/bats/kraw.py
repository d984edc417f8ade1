# Kafka requests built and answers read by hand, byte by byte, for the
# bats suites of the Kafka listener (161): what no client sends on its own
# (zstd where a version may not carry it, an incremental fetch session,
# Metadata's allow_auto_topic_creation false, authorized operations).
# kafka-python builds the record batches; libzstd (through ctypes)
# compresses them, so nothing beyond Debian's python3-kafka is needed.
import ctypes
import socket
import struct
import zlib

from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.util import calc_crc32c

_zstd = ctypes.CDLL("libzstd.so.1")
_zstd.ZSTD_compressBound.restype = ctypes.c_size_t
_zstd.ZSTD_compressBound.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_compress.restype = ctypes.c_size_t
_zstd.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]

NO_OPS = -2147483648


def zstd(data):
    out = ctypes.create_string_buffer(_zstd.ZSTD_compressBound(len(data)))
    n = _zstd.ZSTD_compress(out, len(out), data, len(data), 3)
    assert n < len(out)
    return out.raw[:n]


def batch(values, zstd_records=False):
    """A RecordBatch v2 of values, its records zstd-compressed if asked."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0,
                                  is_transactional=False, producer_id=-1,
                                  producer_epoch=-1, base_sequence=-1,
                                  batch_size=1 << 20)
    for i, v in enumerate(values):
        b.append(i, timestamp=0, key=None, value=v, headers=[])
    raw = bytearray(b.build())
    if zstd_records:
        raw = raw[:61] + zstd(bytes(raw[61:]))
        struct.pack_into(">i", raw, 8, len(raw) - 12)
        struct.pack_into(">h", raw, 21, 4)
        struct.pack_into(">I", raw, 17, calc_crc32c(bytes(raw[21:])))
    return bytes(raw)


def legacy_zstd(values):
    """A MessageSet of one magic-1 wrapper, codec 4 (zstd), of values."""
    b = LegacyRecordBatchBuilder(magic=1, compression_type=0,
                                 batch_size=1 << 20)
    for i, v in enumerate(values):
        b.append(i, timestamp=0, key=None, value=v)
    value = zstd(bytes(b.build()))
    body = struct.pack(">bbqii", 1, 4, 0, -1, len(value)) + value
    msg = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", 0, len(msg)) + msg


def string(s):
    return struct.pack(">h", len(s)) + s.encode()


def call(port, api, version, body):
    """The answer's body, after its correlation id."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = struct.pack(">hhi", api, version, 7) + string("kraw")
    s.sendall(struct.pack(">i", len(head) + len(body)) + head + body)
    size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
    resp = s.recv(size, socket.MSG_WAITALL)
    s.close()
    assert len(resp) == size and struct.unpack(">i", resp[:4])[0] == 7
    return resp[4:]


def produce(port, version, topic, records):
    """(error, base offset, log start or None before v5) of partition 0."""
    body = struct.pack(">h", -1) if version >= 3 else b""
    body += struct.pack(">hii", 1, 30000, 1) + string(topic)
    body += struct.pack(">iii", 1, 0, len(records)) + records
    r = call(port, 0, version, body)
    p = 4 + 2 + len(topic) + 4 + 4
    err, base = struct.unpack(">hq", r[p:p + 10])
    start = struct.unpack(">q", r[p + 18:p + 26])[0] if version >= 5 else None
    return err, base, start


def fetch11(port, topic, offset, epoch=-1):
    """A Fetch v11 of partition 0 from offset, in session 0 at epoch."""
    body = struct.pack(">iiiib", -1, 0, 1, 1 << 20, 0)
    body += struct.pack(">ii", 0, epoch) + struct.pack(">i", 1) + string(topic)
    body += struct.pack(">iiiqqi", 1, 0, -1, offset, -1, 1 << 20)
    return call(port, 1, 11, body + struct.pack(">i", 0) + string("rack"))


def metadata(port, version, topics, allow=True, cluster_ops=False,
             topic_ops=False):
    """[(error, partitions, topic ops or None)], cluster ops or None; every
    leader epoch is checked to be -1 and the cluster id null."""
    body = struct.pack(">i", len(topics)) + b"".join(string(t) for t in topics)
    body += struct.pack(">b", allow)
    if version >= 8:
        body += struct.pack(">bb", cluster_ops, topic_ops)
    r = call(port, 3, version, body)
    p = 4
    (nb,) = struct.unpack(">i", r[p:p + 4])
    p += 4
    for _ in range(nb):
        p += 6 + struct.unpack(">h", r[p + 4:p + 6])[0] + 4 + 2
    assert struct.unpack(">h", r[p:p + 2])[0] == -1
    p += 2 + 4
    (nt,) = struct.unpack(">i", r[p:p + 4])
    p += 4
    out = []
    for _ in range(nt):
        err, nl = struct.unpack(">hh", r[p:p + 4])
        p += 4 + nl + 1
        (np,) = struct.unpack(">i", r[p:p + 4])
        p += 4
        for _ in range(np):
            assert struct.unpack(">i", r[p + 10:p + 14])[0] == -1
            p += 14
            for _ in range(3):
                p += 4 + 4 * struct.unpack(">i", r[p:p + 4])[0]
        ops = None
        if version >= 8:
            (ops,) = struct.unpack(">i", r[p:p + 4])
            p += 4
        out.append((err, np, ops))
    cops = None
    if version >= 8:
        (cops,) = struct.unpack(">i", r[p:p + 4])
        p += 4
    assert p == len(r)
    return out, cops
