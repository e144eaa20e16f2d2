#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end: pcie-telemetry --listen in a Linux guest with two virtual
# cards of pattern traffic, scraped every second through a port forwarded
# from QEMU's user network by a real Prometheus server on the host, with
# the rules of docs/prometheus/ loaded. The test asks Prometheus's HTTP API
# for
#  - rate(words_total) / rate(cycles_total) of each bus, which the
#    timestamps cancel out of, against the words per cycle worked out by
#    hand from each pattern's frame shapes (not from the tool);
#  - the labels of every series of the exporter;
#  - the Gbps recording rule against the value worked out from the stored
#    samples it was computed from (Prometheus's rate(): the first and the
#    last sample of the window, extrapolated to its edges);
#  - up and the scrape duration of both blocks, printed as figures;
#  - the root port's card hot-unplugged: its up 0 and its series gone,
#    the other card's still there, the exporter running on.
# The exporter runs as root with CAP_SYS_ADMIN as its only capability, as
# its systemd unit runs it (setpriv); without that capability it must
# refuse with its permission message.
# Skipped when QEMU lacks the user network or prometheus is not installed.
# TAP output.
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from e2e_support import (REPO, GuestProcess, Qmp, check, free_port,
                          net_files, report, tool_initrd, user_net_missing)

PORT = 9441
RULES = os.path.join(REPO, 'docs/prometheus/ndk-pcie-telemetry.rules.yml')
PCIE_HZ, DMA_HZ = 400e6, 200e6

# Default geometry: 2 regions of 32 B (8 items of 4 B) per word on every
# bus; a frame starts in a new word, waits <bus>-stall cycles, moves its
# words, then the bus idles <bus>-gap cycles: words per cycle is
# words / (stall + words + gap). The first card sits behind a PCIe root
# port (bus 1), as on a real host; the second on the root bus.
CARDS = {
    # the pattern of guest-tool.py
    '0000:01:00.0': dict(
        place=['-device', 'pcie-root-port,id=rp3,chassis=1,slot=3,addr=03.0',
               '-device', 'ndk-pcie-telemetry,id=card1,bus=rp3'],
        args='rq-frame-bytes=256,rq-gap=4,rq-stall=2,'
             'rc-frame-bytes=100,rc-gap=1,'
             'up-frame-bytes=60,up-gap=2,up-stall=1,up-mvb-items=2,'
             'down-frame-bytes=32,brake=0x11,tags-free=20,stfifo-free=600',
        # RQ 256 B = 8 regions = 4 words, period 2 + 4 + 4
        # RC 100 B = 25 items, 4 regions = 2 words, period 0 + 2 + 1
        # UP 60 B = 15 items, 2 regions = 1 word, period 1 + 1 + 2
        # DOWN 32 B = 1 region = 1 word, period 1
        wpc={'RQ': 4 / 10, 'RC': 2 / 3, 'UP': 1 / 4, 'DOWN': 1 / 1}),
    '0000:00:04.0': dict(
        place=['-device', 'ndk-pcie-telemetry,addr=04.0'],
        args='rq-frame-bytes=128,rq-gap=2,rq-stall=0,'
             'rc-frame-bytes=64,rc-gap=3,rc-stall=0,'
             'up-frame-bytes=256,up-gap=0,up-stall=0,'
             'down-frame-bytes=100,down-gap=1,down-stall=0',
        # RQ 128 B = 4 regions = 2 words, period 0 + 2 + 2
        # RC 64 B = 2 regions = 1 word, period 0 + 1 + 3
        # UP 256 B = 8 regions = 4 words, period 0 + 4 + 0
        # DOWN 100 B = 4 regions = 2 words, period 0 + 2 + 1
        wpc={'RQ': 2 / 4, 'RC': 1 / 4, 'UP': 4 / 4, 'DOWN': 2 / 3}),
}

# The labels of each family besides device and index (and Prometheus's
# job and instance); bus families add port on UP and DOWN.
BUS_FAMILIES = ['words_total', 'backpressure_total', 'transactions_total',
                'mvb_items_total', 'mvb_backpressure_total', 'items_total']
LABELS = {
    'cycles_total': {'endpoint', 'clock'},
    'region_cycles_total': {'endpoint', 'bus', 'region'},
    'brake_cycles_total': {'endpoint', 'reason'},
    'hist_cycles_total': {'endpoint', 'hist', 'band'},
    'item_bytes': set(), 'lost_deltas': set(), 'readout_overrun': set(),
    'up': set(), 'scrape_duration_seconds': set(),
}
for fam in BUS_FAMILIES:
    LABELS[fam] = {'endpoint', 'bus'}
for fam in ['link_up', 'mps_bytes', 'mrrs_bytes', 'rcb_bytes', 'ext_tag',
            'tag_10b', 'tags_free', 'tags_free_min', 'stfifo_free',
            'stfifo_free_min']:
    LABELS[fam] = {'endpoint'}


def qemu_args():
    args = []
    for i, (slot, c) in enumerate(sorted(CARDS.items())):
        args += ['-object', 'telemetry-traffic-pattern,id=t%d,%s'
                 % (i, c['args'])]
        args += c['place'][:-1] + [c['place'][-1] + ',traffic=t%d' % i]
    return args


class Prometheus:
    """A Prometheus server of its own: scrapes the exporter every second,
    evaluates the rules every second, stores in a temporary directory."""

    def __init__(self, tmp, target):
        self.port = free_port()
        cfg = os.path.join(tmp, 'prometheus.yml')
        with open(cfg, 'w') as f:
            f.write('global:\n  scrape_interval: 1s\n'
                    '  evaluation_interval: 1s\n'
                    'rule_files:\n  - %s\n'
                    'scrape_configs:\n  - job_name: ndk-pcie-telemetry\n'
                    '    static_configs:\n      - targets: ["%s"]\n'
                    % (RULES, target))
        self.log = open(os.path.join(tmp, 'prometheus.log'), 'w+')
        self.proc = subprocess.Popen(
            ['prometheus', '--config.file=' + cfg,
             '--storage.tsdb.path=' + os.path.join(tmp, 'tsdb'),
             '--web.listen-address=127.0.0.1:%d' % self.port,
             '--log.level=warn'],
            stdout=self.log, stderr=subprocess.STDOUT)

    def get(self, path, **params):
        url = 'http://127.0.0.1:%d%s' % (self.port, path)
        if params:
            url += '?' + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.loads(r.read())

    def ready(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.proc.poll() is None:
            try:
                url = 'http://127.0.0.1:%d/-/ready' % self.port
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        return False

    def query(self, expr, at=None):
        params = {'query': expr}
        if at is not None:
            params['time'] = '%.3f' % at
        d = self.get('/api/v1/query', **params)
        assert d['status'] == 'success', d
        return d['data']['result']

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.seek(0)
        return self.log.read()


def extrapolated_rate(points, range_ms, at_ms):
    """rate(x[range]) at time at from the raw samples [(t, v), ...] in the
    window, times in integer milliseconds as Prometheus stores them, as
    Prometheus 2.x computes it (promql extrapolatedRate): the increase
    between the first and the last sample, corrected for counter resets,
    extrapolated towards the window's edges."""
    if len(points) < 2:
        return None
    first_t, first_v = points[0]
    last_t = points[-1][0]
    result = points[-1][1] - first_v
    prev = 0.0
    for _, v in points:
        if v < prev:
            result += prev
        prev = v
    range_s = range_ms / 1000
    to_start = (first_t - (at_ms - range_ms)) / 1000
    to_end = (at_ms - last_t) / 1000
    sampled = (last_t - first_t) / 1000
    avg = sampled / (len(points) - 1)
    if result > 0 and first_v >= 0:
        to_zero = sampled * (first_v / result)
        if to_zero < to_start:
            to_start = to_zero
    threshold = avg * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else avg / 2
    interval += to_end if to_end < threshold else avg / 2
    return result * (interval / sampled) / range_s


def series_key(metric):
    return tuple(sorted((k, v) for k, v in metric.items()
                        if k not in ('__name__', 'job', 'instance')))


def check_rates(prom, at):
    """words per cycle of every bus of both cards, from the two rates."""
    for clock, buses in (('pcie', 'RQ|RC'), ('dma', 'UP|DOWN')):
        res = prom.query(
            'rate(ndk_pcie_telemetry_words_total{bus=~"%s"}[20s]) / '
            'on(device, index, endpoint) group_left '
            'rate(ndk_pcie_telemetry_cycles_total{clock="%s"}[20s])'
            % (buses, clock), at)
        got = {(r['metric']['device'], r['metric']['bus']):
               float(r['value'][1]) for r in res}
        for slot, c in sorted(CARDS.items()):
            for bus in buses.split('|'):
                want = c['wpc'][bus]
                v = got.get((slot, bus))
                check('%s %s: rate(words_total) / rate(cycles_total{clock='
                      '"%s"}) = %s, the pattern\'s %.6f words per cycle'
                      % (slot, bus, clock, v, want),
                      v is not None and abs(v - want) <= 1e-4 * want,
                      json.dumps(res)[:2000])


def check_labels(prom):
    d = prom.get('/api/v1/series',
                 **{'match[]': '{__name__=~"ndk_pcie_telemetry_.+",'
                               'job="ndk-pcie-telemetry"}'})
    series = d['data']
    per = {}
    bad = []
    for m in series:
        fam = m['__name__'][len('ndk_pcie_telemetry_'):]
        want = LABELS.get(fam)
        keys = set(m) - {'__name__', 'job', 'instance', 'device', 'index'}
        if fam in BUS_FAMILIES + ['region_cycles_total'] and \
                m.get('bus') in ('UP', 'DOWN'):
            want = want | {'port'}
        if want is None or keys != want or m.get('index') != '0' or \
                m.get('device') not in CARDS:
            bad.append(m)
        per.setdefault(fam, set()).add(series_key(m))
    check('every series of the exporter has the labels of its family '
          '(%d series of %d families)' % (len(series), len(per)),
          series and not bad, json.dumps(bad[:5]))
    check('every family is there', set(per) == set(LABELS),
          'missing %s, unknown %s' % (sorted(set(LABELS) - set(per)),
                                      sorted(set(per) - set(LABELS))))
    counts = {fam: len(per.get(fam, ())) for fam in
              ('cycles_total', 'words_total', 'up', 'item_bytes')}
    # per card: 1 endpoint x 2 clocks; RQ, RC, UP0, DOWN0; 1 block
    check('series per family for 2 cards: %s' % counts,
          counts == {'cycles_total': 4, 'words_total': 8, 'up': 2,
                     'item_bytes': 2})
    devs = {dict(k)['device'] for k in per.get('words_total', ())}
    check('the devices are the two cards %s' % sorted(devs),
          devs == set(CARDS))
    ports = {dict(k).get('port') for k in per.get('words_total', ())
             if dict(k)['bus'] in ('UP', 'DOWN')}
    check('UP and DOWN series carry port="0"', ports == {'0'})


def check_gbps(prom, now):
    """The recorded Gbps of each bus against the rate worked out from the
    stored samples of items_total at the rule's evaluation time."""
    res = prom.query('ndk_pcie_telemetry:bus_gbps:rate1m[10s]', now)
    done = 0
    for r in res:
        m = r['metric']
        sel = ','.join('%s="%s"' % (k, m[k]) for k in
                       ('device', 'index', 'endpoint', 'bus', 'port')
                       if k in m)
        # the last few evaluations; a scrape stamped just before an
        # evaluation but stored after it is not in that evaluation's
        # window, so each must equal the samples' rate with or without
        # the newest sample
        ok_all, detail = True, []
        for t, v in r['values'][-4:]:
            raw = prom.query('ndk_pcie_telemetry_items_total{%s}[1m]' % sel,
                             t)
            ib = prom.query('ndk_pcie_telemetry_item_bytes{device="%s",'
                            'index="%s"}' % (m['device'], m['index']), t)
            if len(raw) != 1 or len(ib) != 1:
                ok_all = False
                detail.append('no samples at %s' % t)
                continue
            # the API writes times as seconds with 3 decimals
            pts = [(round(float(a) * 1000), float(b))
                   for a, b in raw[0]['values']]
            item_bytes = float(ib[0]['value'][1])
            cands = []
            for p in (pts, pts[:-1]):
                rate = extrapolated_rate(p, 60000, round(float(t) * 1000))
                if rate is not None:
                    cands.append(rate * item_bytes * 8 / 1e9)
            match = any(abs(float(v) - c) <= 1e-9 * max(abs(c), 1e-12)
                        for c in cands)
            ok_all &= match
            detail.append('t=%s recorded %s, from %d samples %s'
                          % (t, v, len(pts), cands))
        check('%s: the recorded Gbps equals rate(items_total[1m]) x '
              'item_bytes x 8 / 1e9 worked out from the stored samples'
              % sel, ok_all, '\n'.join(detail))
        done += 1
    check('the Gbps rule has a series per bus of both cards (%d)' % done,
          done == 8)


def setpriv_files():
    """util-linux's setpriv and the library it links, as FILE:PATH pairs
    for the initramfs (the guest's libc comes with the tool)."""
    path = shutil.which('setpriv')
    if not path:
        return []
    files = [path + ':/usr/local/sbin/setpriv']
    out = subprocess.run(['ldd', path], capture_output=True, text=True).stdout
    for lib in re.findall(r'=> (/\S+libcap-ng\S*)', out):
        files.append('%s:%s' % (lib, lib))
    return files


def check_unplug(prom, g, qmp_path):
    """device_del of the card behind the root port: the exporter reports
    it down and keeps serving the other one."""
    gone, kept = '0000:01:00.0', '0000:00:04.0'
    qmp = Qmp(qmp_path)
    reply = qmp.command('device_del', id='card1')
    check('device_del of the card behind the root port', reply and
          'return' in reply, str(reply))
    check('QEMU takes the card off its bus (DEVICE_DELETED)',
          qmp.wait_event('DEVICE_DELETED', 10))
    end = time.monotonic() + 20
    ups = {}
    while time.monotonic() < end:
        ups = {r['metric']['device']: r['value'][1]
               for r in prom.query('ndk_pcie_telemetry_up')}
        if ups.get(gone) == '0':
            break
        time.sleep(0.5)
    check('the gone card\'s ndk_pcie_telemetry_up is 0, the other\'s 1: %s'
          % ups, ups == {gone: '0', kept: '1'})
    time.sleep(2)
    words = {r['metric']['device'] for r in
             prom.query('ndk_pcie_telemetry_words_total')}
    check('the gone card\'s counters are no longer served (%s)'
          % sorted(words), words == {kept})
    check('the exporter logs the block going down',
          g.wait_for(r'pcie-telemetry: %s block 0: down: ' % gone, 5))
    check('Prometheus still scrapes the exporter',
          prom.query('up{job="ndk-pcie-telemetry"} == 1'))


def main():
    why = user_net_missing()
    if not why and not shutil.which('prometheus'):
        why = 'prometheus is not installed (apt-get install prometheus)'
    if why:
        print('1..0 # SKIP ' + why)
        return 0
    notes, extra = [], []
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/e2e-prometheus.sh',
                    net_files() + setpriv_files())
        prom = None
        qmp_path = os.path.join(tmp, 'qmp')
        with GuestProcess(initrd, qemu_args() + [
                '-qmp', 'unix:%s,server=on,wait=off' % qmp_path],
                forwards=[PORT], timeout=170) as g:
            m = g.wait_for(r'serving (\d+) telemetry blocks? at|'
                           r'^=== NET failed', 60)
            check('the exporter serves the two blocks in the guest',
                  m and m.group(1) == '2', m and m.group(0))
            if m and m.group(1):
                prom = Prometheus(tmp, '127.0.0.1:%d' % g.ports[PORT])
                check('Prometheus starts', prom.ready(30))
                # the first good scrape, then 25 s of them
                end = time.monotonic() + 60
                up = []
                while time.monotonic() < end:
                    up = prom.query('up{job="ndk-pcie-telemetry"} == 1')
                    if up:
                        break
                    time.sleep(0.5)
                check('Prometheus scrapes the exporter (up == 1)', up)
                t_first = time.time()
                time.sleep(25)
                now = time.time()
                res = prom.query('ndk_pcie_telemetry_up', now)
                check('ndk_pcie_telemetry_up is 1 for both blocks',
                      sorted((r['metric']['device'], r['value'][1])
                             for r in res) ==
                      [(s, '1') for s in sorted(CARDS)], json.dumps(res))
                check_rates(prom, now)
                check_labels(prom)
                check_gbps(prom, now)
                span = '[%ds]' % int(now - t_first)
                for expr, what in (
                        ('avg_over_time(ndk_pcie_telemetry_scrape_'
                         'duration_seconds%s)' % span,
                         'block read-out in the guest'),
                        ('avg_over_time(scrape_duration_seconds{job="ndk-pcie-telemetry"}'
                         '%s)' % span, 'whole scrape seen by Prometheus'),
                        ('count_over_time(up{job="ndk-pcie-telemetry"}'
                         '[1h])',
                         'scrapes')):
                    for r in prom.query(expr, now):
                        extra.append('%s %s: %s' % (
                            what, r['metric'].get('device', ''),
                            r['value'][1]))
                scrapes = prom.query('count_over_time(up{job="ndk-pcie-'
                                     'telemetry"}[1h])', now)
                check_unplug(prom, g, qmp_path)
            g.send('done')
            rc = g.wait(30)
            plog = prom.stop() if prom else ''
            console = g.console
            lines = list(g.lines)
    m = re.search(r'^=== CPU (\d+) (\d+) (\d+)$', console, re.M)
    if m and prom and scrapes:
        n = float(scrapes[0]['value'][1])
        cpu = (int(m.group(1)) + int(m.group(2))) / int(m.group(3))
        extra.append('exporter CPU time in the guest: %.2f s for %d scrapes '
                     '(%.1f ms per scrape of 2 blocks, with its start)'
                     % (cpu, n, cpu / n * 1e3))
    m = re.search(r'^=== CAPS (\S+)$', console, re.M)
    check('the exporter runs with CAP_SYS_ADMIN only (setpriv; CapEff %s)'
          % (m and m.group(1)), m and m.group(1) == '0000000000200000')
    m = re.search(r'^=== NOCAP (\d+) (.*)$', console, re.M)
    check('without CAP_SYS_ADMIN it refuses: exit 4, "%s"'
          % (m and m.group(2)), m and m.group(1) == '4' and
          'CAP_SYS_ADMIN' in m.group(2))
    check('the exporter ends on SIGTERM with status 0',
          re.search(r'^=== EXPORTER-EXIT 0$', console, re.M))
    check('the guest powers off with its main\'s status 0 (GUEST-EXIT 0)',
          rc == 0 and re.search(r'^GUEST-EXIT 0', console, re.M),
          'guest-run.sh status %s' % rc)
    notes += extra
    return report([('guest console', lines),
                   ('prometheus log', plog.splitlines())], notes)


if __name__ == '__main__':
    sys.exit(main())
