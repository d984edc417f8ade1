#!/usr/bin/python3
# ackdrop.py LISTEN_PORT BROKER_PORT TRIGGER: a TCP relay in front of a
# Kafka listener that, each time TRIGGER appears (it removes it), swallows
# what the broker answers for 300 ms, requests still passing, then drops
# every connection: acknowledgements lost, so a producer sends again
# batches the broker has.  The drop comes at the end of the 300 ms even
# when nothing more comes from the broker (a producer whose in-flight
# requests all wait for answers sends nothing).  Used by bats 165, 169
# and tests/soak/idempotence.sh.
import os, socket, sys, threading, time
lport, bport, trigger = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
state = {'until': 0.0, 'gen': 0}
lock = threading.Lock()
conns = []    # (generation, client socket, broker socket)
def shut(socks):
    for s in socks:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def watch():
    while True:
        time.sleep(0.01)
        with lock:
            if time.time() < state['until']:
                continue
            old = [c for c in conns if c[0] != state['gen']]
            conns[:] = [c for c in conns if c[0] == state['gen']]
        for c in old:
            shut(c[1:])
threading.Thread(target=watch, daemon=True).start()
def pump(src, dst, answers, gen):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if answers:
                with lock:
                    if os.path.exists(trigger):
                        os.unlink(trigger)
                        state['until'] = time.time() + 0.3
                        state['gen'] += 1
                    until, g = state['until'], state['gen']
                if g != gen and time.time() >= until:
                    break
                if g != gen:
                    continue
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', lport))
srv.listen(64)
while True:
    c, _ = srv.accept()
    try:
        b = socket.create_connection(('127.0.0.1', bport))
    except OSError:
        c.close()    # the broker is down: as if the relay were
        continue
    with lock:
        gen = state['gen']
        conns.append((gen, c, b))
    threading.Thread(target=pump, args=(c, b, False, gen), daemon=True).start()
    threading.Thread(target=pump, args=(b, c, True, gen), daemon=True).start()
