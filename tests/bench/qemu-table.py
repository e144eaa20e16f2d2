#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The cost of the virtual card in a whole QEMU, as one table (a benchmark,
# not a test: it prints figures and asserts nothing).
#
# For each card and traffic: QEMU under -accel qtest steps the virtual
# clock VSEC seconds at once (no access to the card meanwhile), then takes
# one SNAPSHOT and reads every counter; the figure is the QEMU process's
# CPU time (all its threads, from /proc) over that, per virtual second,
# the median of RUNS runs. Then the host time of the first access after 10 s
# and after 3600 s of unread virtual time (the QEMU process's CPU time
# around that one read). Then the guest's time from QEMU's start to
# GUEST-START under TCG with the demo initramfs, median of BOOTS runs.
#
# usage: qemu-table.py [--vsec 60] [--runs 3] [--boots 5] [--no-boot]
#                      [--card TEXT] [--only TEXT] [--sources all|overloaded|others]
#                      [--no-cpu]
#        qemu-table.py --first-access [--runs 3] [--paced 10 600]
#                      [--stepped 3600]
# The second form prints only the first access after unread stretches, for
# every traffic that the card counts in the background or lazily: the wall
# time from sending the access to its reply minus the same access's round
# trip right after, the clock either paced at real time in 10 ms qtest
# steps (as a running VM's) or stepped at once.
# QEMU=... and FIRMWARE_DIR=... measure another binary (a copy finds its
# firmware only with FIRMWARE_DIR, the directory of bios-256k.bin).
import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, 'python'))
from ndk_telemetry import Card, Machine, Traffic  # noqa: E402
QEMU = os.environ.get('QEMU', os.path.join(REPO, 'build', 'qemu-system-x86_64'))
# a copy of the binary (QEMU=...) finds no firmware by itself: FIRMWARE_DIR
FIRMWARE = ['-L', os.environ['FIRMWARE_DIR']] if 'FIRMWARE_DIR' in os.environ \
    else []

FIRST = ('pattern,rq-frame-bytes=256,rc-frame-bytes=64,up-frame-bytes=128,'
         'up-gap=1,down-frame-bytes=512,brake=0x15,brake-duty=25,tags-free=20,'
         'stfifo-free=300,up-mvb-items=2')
ODD = FIRST.replace('rq-frame-bytes=256', 'rq-frame-bytes=300') + \
    ',rc-gap=2,down-stall=2'
BIG = 'pcie-endpoints=2,dma-ports=2,pcie-rq-mfb-regions=4'


def rtl_set(name, clocks=',pcie-clk-freq=250000000,dma-clk-freq=125000000'):
    """The generics of an RTL vector's card (tests/rtl/<name>/card.txt) as
    device properties; the DMA clock at 125 MHz, which ptc needs (a whole
    fraction of 256 PCIe cycles), for the vectors' 200 MHz."""
    props = []
    with open(os.path.join(REPO, 'tests', 'rtl', name, 'card.txt')) as f:
        for line in f:
            line = line.split('#')[0].strip()
            if line and not line.startswith(('pcie-clk', 'dma-clk')):
                props.append(line)
    return ','.join(props) + clocks


def write_trace(path, cycles=200000, seed=7):
    """A dense text trace: frames of 1 to 4 words with gaps and stalls on
    RQ and UP (with MVB) of endpoint 0, exactly `cycles` cycles per probe
    (a frame that would run past the end is left out: idle cycles end
    the trace)."""
    r = random.Random(seed)
    with open(path, 'w') as f:
        for probe, bus in (('pcie0', 'rq'), ('dma0', 'up0')):
            t = 0
            while t < cycles:
                words = r.randint(1, 4)
                if t + words > cycles:
                    f.write('%s cycles=%d\n' % (probe, cycles - t))
                    break
                for w in range(words):
                    line = '%s %s.src=1 %s.dst=%d' % (probe, bus, bus,
                                                      r.randint(0, 9) != 0)
                    if w == 0:
                        line += ' %s.sof=1' % bus
                        if probe == 'dma0':
                            line += ' up0.vld=1 up0.msrc=1 up0.mdst=1'
                    if w == words - 1:
                        line += ' %s.eof=2 %s.pos1=%d' % (bus, bus,
                                                          r.randint(0, 7))
                    f.write(line + '\n')
                    t += 1
                gap = min(r.randint(0, 3), cycles - t)
                if gap:
                    f.write('%s cycles=%d\n' % (probe, gap))
                    t += gap


def one_phase_scenario(path):
    """A scenario of one `pattern` phase (FIRST) of 1 ms, then 1 ms idle."""
    keys = FIRST.split(',')[1:]
    with open(path, 'w') as f:
        f.write('[phase first]\nmodel=pattern\nduration=1ms\n')
        f.write(''.join(k + '\n' for k in keys))
        f.write('[phase rest]\nmodel=idle\nduration=1ms\n')


# (SAMPLE_PLUGIN=...: another build's, for another binary)
SAMPLE_PLUGIN = os.environ.get('SAMPLE_PLUGIN', os.path.join(
    REPO, 'build', 'traffic-gen', 'plugins', 'ptm-sample-plugin.so'))


def overloaded_rows(trace, one_phase):
    """Cards that lose deltas all the time, with every source."""
    scenario = os.path.join(REPO, 'examples', 'scenario-burst.ini')
    sources = [
        ('random', 'random'),
        ('scenario (examples/)', 'scenario,file=%s,loop=on' % scenario),
        ('scenario (one pattern phase, then idle)',
         'scenario,file=%s,loop=on' % one_phase),
        ('replay, 200 000 cycles, looped', 'replay,file=%s,end=loop' % trace),
        ('plugin (sample)', 'plugin,path=%s' % SAMPLE_PLUGIN),
    ]
    out = []
    for card, props in (('default, drain-period=64 (overloaded)',
                         'drain-period=64'),
                        ('default, drain-period=256 (overloaded)',
                         'drain-period=256'),
                        ('16 x 4 (overloaded)',
                         'pcie-endpoints=16,dma-ports=4')):
        for name, traffic in sources:
            out.append((card, name, props, traffic))
    return out


def rows(trace, one_phase=None):
    scenario = os.path.join(REPO, 'examples', 'scenario-burst.ini')
    extra = overloaded_rows(trace, one_phase) if one_phase else []
    return [
        ('default', 'idle', '', 'idle'),
        ('default', 'pattern (first)', '', FIRST),
        ('default', 'pattern (odd periods)', '', ODD),
        ('default', 'replay, 200 000 cycles, looped', '',
         'replay,file=%s,end=loop' % trace),
        ('default', 'ptc', '', 'ptc'),
        ('default', 'scenario (examples/)', '',
         'scenario,file=%s,loop=on' % scenario),
        ('default', 'random', '', 'random'),
        ('2 x 2, 4 RQ regions', 'pattern (first)', BIG, FIRST),
        ('2 x 2, 4 RQ regions', 'ptc', BIG, 'ptc'),
        ('16 x 4, drain-period=16384', 'ptc',
         'pcie-endpoints=16,dma-ports=4,drain-period=16384', 'ptc'),
        ('16 x 4 (overloaded)', 'ptc', 'pcie-endpoints=16,dma-ports=4', 'ptc'),
        ('16 x 4 (overloaded)', 'pattern (first)',
         'pcie-endpoints=16,dma-ports=4', FIRST),
        ('default, drain-period=64 (overloaded)', 'pattern (first)',
         'drain-period=64', FIRST),
        ('default, drain-period=256 (overloaded)', 'ptc', 'drain-period=256',
         'ptc'),
        ('2 x 2, 4 RQ regions, drain-period=512 (overloaded)', 'ptc',
         BIG + ',drain-period=512', 'ptc'),
        ('RTL set A (overload-A, DMA clock 125 MHz)', 'ptc',
         rtl_set('overload-A'), 'ptc'),
        ('RTL set B (overload-B, DMA clock 125 MHz)', 'ptc',
         rtl_set('overload-B'), 'ptc'),
        ('RTL set C (overload-C, DMA clock 125 MHz)', 'ptc',
         rtl_set('overload-C'), 'ptc'),
    ] + extra


def cpu_ns(pid):
    """CPU time of all threads of a process, from their schedstat (ns)."""
    total = 0
    for task in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/schedstat' % (pid, task)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


class Qtest:
    """QEMU under -accel qtest with one card, through ndk_telemetry (no
    timeout: a long step of a costly card may take minutes; a QEMU that
    exits is reported either way)."""

    def __init__(self, props, traffic):
        opts = dict(kv.split('=', 1) for kv in props.split(',')) \
            if props else {}
        self.m = Machine([Card(opts, traffic=Traffic.parse(traffic))],
                         qemu=QEMU, extra_args=FIRMWARE, timeout=None)
        self.card = self.m.cards[0]
        self.pid = self.m.pid
        self.m.clock_step(1000)

    def step(self, ns):
        self.m.clock_step(ns)

    def readl(self, off):
        return self.card.read32(off)

    def readout(self):
        """SNAPSHOT, wait for BUSY to clear, read every counter."""
        self.card.snapshot()
        self.card.counters(live=False, entries=self.card.layout.entries)

    def close(self):
        self.m.kill()


def per_vsec(props, traffic, vsec):
    q = Qtest(props, traffic)
    try:
        before = cpu_ns(q.pid)
        q.step(int(vsec * 1e9))
        q.readout()
        return (cpu_ns(q.pid) - before) / 1e9 / vsec
    finally:
        q.close()


def first_access(traffic, unread_s):
    q = Qtest('', traffic)
    try:
        q.readout()
        q.step(int(unread_s * 1e9))
        before = cpu_ns(q.pid)
        q.readl(0x24)
        return (cpu_ns(q.pid) - before) / 1e9
    finally:
        q.close()


def timed_read(q):
    start = time.perf_counter()
    q.readl(0x24)
    return time.perf_counter() - start


def first_access_wall(traffic, unread_s, paced):
    """Wall time of the first access after unread_s of virtual time, minus
    the round trip of the same access right after it (nothing left to
    catch up). Paced: the clock advanced in 10 ms steps, each padded with
    sleep to 10 ms of host time, as a running VM's clock; else in one
    step."""
    q = Qtest('', traffic)
    try:
        q.readout()
        if paced:
            for _ in range(int(round(unread_s * 100))):
                start = time.monotonic()
                q.step(10000000)
                left = 0.01 - (time.monotonic() - start)
                if left > 0:
                    time.sleep(left)
        else:
            q.step(int(unread_s * 1e9))
        first = timed_read(q)
        idle = statistics.median(timed_read(q) for _ in range(5))
        return max(0.0, first - idle)
    finally:
        q.close()


def first_access_table(a):
    """The first access after unread stretches, every traffic that counts
    in the background or lazily; the runs of one table row in parallel
    (they sleep most of the time)."""
    import concurrent.futures
    tmp = tempfile.mkdtemp(prefix='qemu-table-')
    trace = os.path.join(tmp, 'dense.trace')
    write_trace(trace)
    scenario = os.path.join(REPO, 'examples', 'scenario-burst.ini')
    sources = [('ptc', 'ptc'), ('random', 'random'),
               ('scenario (examples/, looped)',
                'scenario,file=%s,loop=on' % scenario),
               ('replay, dense, looped', 'replay,file=%s,end=loop' % trace),
               ('pattern (first)', FIRST)]
    if a.only:
        sources = [x for x in sources if a.only in x[0]]
    cases = [(u, True) for u in a.paced] + [(u, False) for u in a.stepped]
    print('\nFirst access to a default card after a stretch unread: wall '
          'time minus an idle round trip, ms (median of %d)\n' % a.runs)
    print('| traffic | ' + ' | '.join(
        '%g s %s' % (u, 'paced' if p else 'one step') for u, p in cases) +
        ' |')
    print('| --- |' + ' ---: |' * len(cases))
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as ex:
        for name, traffic in sources:
            cells = []
            for unread, paced in cases:
                runs = list(ex.map(lambda _: first_access_wall(
                    traffic, unread, paced), range(a.runs)))
                cells.append('%.3f' % (1e3 * statistics.median(runs)))
            print('| %s | %s |' % (name, ' | '.join(cells)), flush=True)
    os.unlink(trace)
    os.rmdir(tmp)


def boot_time(initrd, args):
    cmd = [os.path.join(REPO, 'scripts', 'guest-run.sh'), initrd] + args
    env = dict(os.environ, GUEST_TIMEOUT="300")
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, text=True, env=env,
                         start_new_session=True)
    seen = None
    for line in p.stdout:
        if line.startswith('GUEST-START'):
            seen = time.monotonic() - start
            break
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    # timeout(1) runs QEMU in a process group of its own
    subprocess.run(['pkill', '-9', '-f', initrd], stdout=subprocess.DEVNULL)
    return seen


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--vsec', type=float, default=60)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--boots', type=int, default=5)
    ap.add_argument('--no-boot', action='store_true')
    ap.add_argument('--no-cpu', action='store_true')
    ap.add_argument('--first-access', action='store_true',
                    help='only the table of first accesses')
    ap.add_argument('--paced', type=float, nargs='*', default=[10, 600],
                    help='unread seconds, clock paced at real time')
    ap.add_argument('--stepped', type=float, nargs='*', default=[3600],
                    help='unread seconds, clock stepped at once')
    ap.add_argument('--only', help='only the traffic rows whose name has this')
    ap.add_argument('--card', help='only the CPU rows whose card has this')
    ap.add_argument('--sources', choices=('all', 'overloaded', 'others'),
                    default='all',
                    help='the overloaded rows of every source only, or '
                    'all rows but those')
    a = ap.parse_args()

    if a.first_access:
        first_access_table(a)
        return
    if not a.no_cpu:
        cpu_table(a)
    if not a.no_boot:
        boot_table(a)


def cpu_table(a):
    tmp = tempfile.mkdtemp(prefix='qemu-table-')
    trace = os.path.join(tmp, 'dense.trace')
    one_phase = os.path.join(tmp, 'one-phase.ini')
    write_trace(trace)
    one_phase_scenario(one_phase)
    print('QEMU CPU seconds per virtual second (-accel qtest, %g virtual s '
          'stepped at once, then SNAPSHOT and every counter read; median of '
          '%d runs)\n' % (a.vsec, a.runs))
    print('| card | traffic | CPU s per virtual s |')
    print('| --- | --- | ---: |')
    extra = {r[:2] for r in overloaded_rows(trace, one_phase)}
    for card, name, props, traffic in rows(trace, one_phase):
        if (a.sources == 'overloaded') != ((card, name) in extra) and \
                a.sources != 'all':
            continue
        if (a.card and a.card not in card) or (a.only and a.only not in name):
            continue
        runs = [per_vsec(props, traffic, a.vsec) for _ in range(a.runs)]
        print('| %s | %s | %.4f |' % (card, name, statistics.median(runs)))
        sys.stdout.flush()
    for unread in (10, 3600):
        runs = [first_access(FIRST, unread) for _ in range(a.runs)]
        print('| default | pattern (first): first access after %d s unread '
              '| %.2f ms host CPU |' % (unread, 1e3 * statistics.median(runs)))
    os.unlink(trace)
    os.unlink(one_phase)
    os.rmdir(tmp)


def boot_table(a):
    initrd = os.path.join(REPO, 'build', 'demo-initramfs.gz')
    if not os.path.exists(initrd):
        files = subprocess.run([os.path.join(REPO, 'scripts',
                                             'guest-tool-files.sh'),
                                os.path.join(REPO, 'build')], check=True,
                               capture_output=True, text=True).stdout.split()
        subprocess.run([os.path.join(REPO, 'scripts', 'guest-initramfs.sh'),
                        initrd, os.path.join(REPO, 'guest', 'demo-report.sh')]
                       + files, check=True, stdout=subprocess.DEVNULL)
    print('\nGuest under TCG, QEMU start to GUEST-START (median of %d boots)\n'
          % a.boots, flush=True)
    print('| card | traffic | seconds |')
    print('| --- | --- | ---: |')
    for card, name, props, traffic in [
            ('default', 'none', '', None),
            ('default', 'ptc', '', 'ptc'),
            ('2 x 2, 4 RQ regions', 'pattern (first)', BIG, FIRST),
            ('16 x 4', 'ptc', 'pcie-endpoints=16,dma-ports=4', 'ptc')]:
        args = []
        dev = 'ndk-pcie-telemetry'
        if traffic:
            args += ['-object', 'telemetry-traffic-%s,id=t0' % traffic]
            dev += ',traffic=t0'
        if props:
            dev += ',' + props
        args += ['-device', dev]
        times = [boot_time(initrd, args) for _ in range(a.boots)]
        done = [t for t in times if t is not None]
        med = '%.2f' % statistics.median(done) if done else 'no boot'
        print('| %s | %s | %s (%d of %d booted) |' % (card, name, med,
                                                    len(done), a.boots))
        sys.stdout.flush()


if __name__ == '__main__':
    main()
