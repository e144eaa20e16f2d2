#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end: a Linux guest with the big cards boots under TCG and
# pcie-telemetry reads them (guest/e2e-big.sh). The 2 x 2 card carries
# pattern frames that fill the RQ bus (so its words equal its cycles) and
# its accumulator keeps up. Three cards lose deltas all the time, as the
# RTL does when its accumulator is overloaded: the 16 x 4 card with ptc at
# the default drain period (its 16 endpoints give the accumulator about
# three times the deltas it can take), and default cards at drain periods
# 64 (pattern) and 256 (ptc), and with random and a looped scenario at
# drain periods 64 and 256 (whose models cost about real time or more:
# a reading must still return, the guest's clock standing still while the
# card's model catches up). TAP output.
import os
import subprocess
import sys
import tempfile

from e2e_support import (REPO, check, guest_steps, json_docs, report,
                          tool_initrd)

DRAIN = 4096
# Both cards sit behind PCIe root ports, as on a real host: buses 1 and 2.
CARDS = [
    # 01:00.0: RQ frames of 256 B are 64 items = 8 regions of 8 items, two
    # words of four regions back to back
    '-object telemetry-traffic-pattern,id=t3,rq-frame-bytes=256,'
    'rc-frame-bytes=64,up-frame-bytes=128,up-gap=1,down-frame-bytes=512,'
    'brake=0x15,brake-duty=25,tags-free=20,stfifo-free=300,up-mvb-items=2',
    '-device pcie-root-port,id=rp3,chassis=1,slot=3,addr=03.0',
    '-device ndk-pcie-telemetry,bus=rp3,traffic=t3,pcie-endpoints=2,'
    'dma-ports=2,pcie-rq-mfb-regions=4',
    # 02:00.0
    '-object telemetry-traffic-ptc,id=t4',
    '-device pcie-root-port,id=rp4,chassis=1,slot=4,addr=04.0',
    '-device ndk-pcie-telemetry,bus=rp4,traffic=t4,pcie-endpoints=16,'
    'dma-ports=4',
    # 03:00.0 and 04:00.0: default cards, overloaded by short windows
    '-object telemetry-traffic-pattern,id=t5,rq-frame-bytes=256,'
    'rc-frame-bytes=64,up-frame-bytes=128,up-gap=1,down-frame-bytes=512,'
    'brake=0x15,brake-duty=25,tags-free=20,stfifo-free=300,up-mvb-items=2',
    '-device pcie-root-port,id=rp5,chassis=1,slot=5,addr=05.0',
    '-device ndk-pcie-telemetry,bus=rp5,traffic=t5,drain-period=64',
    '-object telemetry-traffic-ptc,id=t6',
    '-device pcie-root-port,id=rp6,chassis=1,slot=6,addr=06.0',
    '-device ndk-pcie-telemetry,bus=rp6,traffic=t6,drain-period=256',
    # 05:00.0 to 08:00.0: default cards overloaded by short windows, with
    # the sources that change their traffic from span to span (random's
    # decision blocks, the example scenario's phases)
    '-object telemetry-traffic-random,id=t7',
    '-device pcie-root-port,id=rp7,chassis=1,slot=7,addr=07.0',
    '-device ndk-pcie-telemetry,bus=rp7,traffic=t7,drain-period=64',
    '-object telemetry-traffic-random,id=t8',
    '-device pcie-root-port,id=rp8,chassis=1,slot=8,addr=08.0',
    '-device ndk-pcie-telemetry,bus=rp8,traffic=t8,drain-period=256',
    '-object telemetry-traffic-scenario,id=t9,loop=on,file=' +
    os.path.join(REPO, 'examples', 'scenario-burst.ini'),
    '-device pcie-root-port,id=rp9,chassis=1,slot=9,addr=09.0',
    '-device ndk-pcie-telemetry,bus=rp9,traffic=t9,drain-period=64',
    '-object telemetry-traffic-scenario,id=t10,loop=on,file=' +
    os.path.join(REPO, 'examples', 'scenario-burst.ini'),
    '-device pcie-root-port,id=rp10,chassis=1,slot=10,addr=0a.0',
    '-device ndk-pcie-telemetry,bus=rp10,traffic=t10,drain-period=256',
]


def check_lossy(name, step, endpoints, steps, rq_words=True):
    """A card that loses deltas: the reading returns, says so, and counts
    at most what a card that keeps up would (the interval's cycles of a
    400 MHz clock, and the 32 ms a background tick of the card's model may
    hold the big lock at either SNAPSHOT, which the guest's clock reads
    around it do not see), but not nothing. (Far overloaded, the
    accumulator may lose the same channel in every window: then no RQ
    words.)"""
    rc, out = steps.get(step, (None, ''))
    try:
        top = json_docs(out)[0]
        doc = top['data']
        eps = doc['endpoints']
        check('%s: read, %d endpoints, deltas lost (STATUS bit 1)' %
              (name, endpoints),
              rc == 0 and len(eps) == endpoints and
              doc['status']['lost_deltas'], out[:2000])
        most = (top['seconds'] + 2 * 0.032) * 400e6 * 1.01
        check('%s: every endpoint counted some of the interval\'s cycles, '
              'not more (%.3f s)' % (name, top['seconds']),
              all(0 < ep['pcie_cycles'] <= most for ep in eps),
              str([ep['pcie_cycles'] for ep in eps]))
        if rq_words:
            check('%s: words counted on RQ of every endpoint' % name,
                  all(ep['buses']['PTC -> PCIe (RQ)']['words'] > 0
                      for ep in eps))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        check('%s JSON parses' % name, False, '%r\n%s' % (e, out))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/e2e-big.sh')
        args = []
        for c in CARDS:
            args += c.split(' ', 1)
        p = subprocess.run([os.path.join(REPO, 'scripts/guest-run.sh'),
                            initrd] + args, capture_output=True, text=True)
    console = p.stdout + p.stderr
    check('the guest with the eight big or overloaded cards boots and ends '
          'well',
          p.returncode == 0 and 'GUEST-START' in console, console[-3000:])
    steps = guest_steps(console)

    rc, out = steps.get('list', (None, ''))
    check('--list shows both cards', rc == 0 and '0000:01:00.0' in out and
          '0000:02:00.0' in out, out)

    rc, out = steps.get('two-by-two', (None, ''))
    try:
        doc = json_docs(out)[0]['data']
        eps = doc['endpoints']
        check('2 x 2 card: read, 2 endpoints, no delta lost',
              rc == 0 and len(eps) == 2 and
              not doc['status']['lost_deltas'], out[:2000])
        for i, ep in enumerate(eps):
            rq = ep['buses']['PTC -> PCIe (RQ)']
            # a word every cycle: words = cycles, but for one window in
            # flight at either end of the interval
            check('2 x 2 card, endpoint %d: RQ moves a word every cycle '
                  '(%d words, %d cycles)' % (i, rq['words'],
                                             ep['pcie_cycles']),
                  ep['pcie_cycles'] > 1e8 and
                  abs(rq['words'] - ep['pcie_cycles']) <= 2 * DRAIN,
                  str(rq))
    except (ValueError, KeyError, IndexError, TypeError) as e:
        check('2 x 2 card JSON parses', False, '%r\n%s' % (e, out))

    check_lossy('16 x 4 card (ptc, default drain period)', 'sixteen-by-four',
                16, steps)
    check_lossy('default card at drain-period=64 (pattern)', 'drain-64', 1,
                steps, rq_words=False)
    check_lossy('default card at drain-period=256 (ptc)', 'drain-256', 1,
                steps)
    # (random and the scenario's phases leave RQ idle now and then, and
    # the far overloaded accumulator may lose its words every time)
    for name, step in (('random, drain-period=64', 'random-64'),
                       ('random, drain-period=256', 'random-256'),
                       ('scenario, drain-period=64', 'scenario-64'),
                       ('scenario, drain-period=256', 'scenario-256')):
        check_lossy('default card with %s' % name, step, 1, steps,
                    rq_words=False)
    sys.exit(report([('guest console', console.splitlines())]))


if __name__ == '__main__':
    main()
