#!/usr/bin/python3
# idemprod.py BOOTSTRAP TOPIC N PROGRESS [SECONDS]: an idempotent
# confluent-kafka producer of records "00000000", "00000001", ... (N of
# them, or as many as SECONDS allow), paced so that faults land
# mid-stream, writing how many were acknowledged to PROGRESS as it goes
# (replaced whole); prints "sent S" (with SECONDS) and "acked A failed F
# left L [first errors]" at the end.  Used by bats 165 and
# tests/soak/idempotence.sh.
import os, sys, time
from confluent_kafka import Producer
boot, topic, n, progress = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
stop = time.time() + float(sys.argv[5]) if len(sys.argv) > 5 else None
p = Producer({'bootstrap.servers': boot, 'enable.idempotence': True,
    'linger.ms': 2, 'batch.num.messages': 50,
    'message.timeout.ms': 120000, 'retry.backoff.ms': 50,
    'reconnect.backoff.ms': 20, 'reconnect.backoff.max.ms': 200,
    'socket.timeout.ms': 5000, 'topic.metadata.refresh.interval.ms': 1000})
acked = [0]
failed = []
def done(err, msg):
    if err is None:
        acked[0] += 1
    else:
        failed.append(err.str())
def say(k):
    with open(progress + '.tmp', 'w') as f:
        f.write('%d\n' % k)
    os.replace(progress + '.tmp', progress)
last = 0
sent = 0
for i in range(n):
    if stop is not None and time.time() >= stop:
        break
    sent += 1
    while True:
        try:
            p.produce(topic, b'%08d' % i, on_delivery=done)
            break
        except BufferError:
            p.poll(0.05)
    p.poll(0)
    if i % 50 == 49:
        time.sleep(0.01)
    if acked[0] - last >= 500:
        last = acked[0]
        say(last)
left = p.flush(120)
say(acked[0])
if stop is not None:
    print('sent', sent)
print('acked', acked[0], 'failed', len(failed), 'left', left,
    failed[:3])
