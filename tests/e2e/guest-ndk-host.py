#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end: the virtual card as a host with a real NDK card has it, behind
# a PCIe root port and bound by a driver (guest/e2e-ndk-host.sh).
#  - lspci (Debian's pciutils in the guest) shows the card's MSI capability
#    and the link it is configured with in LnkCap and LnkSta, for the
#    default properties and for others; pcie-telemetry --list shows the
#    same link and the firmware identity from the card's device tree.
#  - The stand-in for CESNET's nfb driver (tests/e2e/nfb-standin, built
#    against Debian's linux-headers package of the guest kernel) binds the
#    cards behind root ports, refuses the one on the root bus as nfb does,
#    claims the BARs and gives /dev/nfb0 and /dev/nfb1, whose class devices
#    lead to the cards.
#  - pcie-telemetry -d /dev/nfbN reads a card the driver owns when the
#    kernel runs with iomem=relaxed, and without it fails with exit 4 and
#    the message that says to boot with iomem=relaxed; the card on the root
#    bus, which no driver owns, reads either way, and so does the card once
#    the driver is gone.
# Two guests, one after the other: without and with iomem=relaxed. The
# checks of the driver are skipped (with the reason) only when the kernel
# headers cannot be installed. TAP output.
import os
import re
import subprocess
import sys
import tempfile
import time

from e2e_support import (BUILD, REPO, check, guest_steps, json_docs, report,
                          tests, tool_initrd)

STANDIN = os.path.join(REPO, 'tests/e2e/nfb-standin')
MODULE_PATH = '/lib/modules/nfb_standin.ko'

# The properties of the card at 02:00.0: a link other than the default,
# CESNET's COMBO-GENERIC ID (which nfb binds) and a firmware identity of
# its own; two endpoints tell its readings from the others'.
OTHER_LINK = ('16GT/s', 8)
OTHER_ID = {
    'card-name': 'E2E-CARD',
    'project-name': 'e2e-ndk-host',
    'project-version': '1.2.3',
    'build-time': '1700000000',
    'build-tool': 'Vivado v2023.2',
    'build-author': 'NDK tester',
}
# what --list shows of them: build-time 1700000000 is this UTC
OTHER_SHOWN = dict(OTHER_ID, **{'build-time': '2023-11-14 22:13:20'})
# The defaults of the card at 01:00.0 (ndk-pcie-telemetry,help): PCIe
# Gen3 x16, the model's name and version, card-name by the PCI ID
DEFAULT_LINK = ('8GT/s', 16)
DEFAULT_SHOWN = {
    'card-name': 'QEMU-NDK-TELEMETRY',
    'project-name': 'ndk-pcie-telemetry',
}


def qemu_args():
    other = ('ndk-pcie-telemetry,bus=rp3,vendor-id=0x18ec,device-id=0xc000,'
             'pcie-endpoints=2,link-speed=%s,link-width=%d'
             % (OTHER_LINK[0].replace('GT/s', '').replace('.', '_'),
                OTHER_LINK[1]))
    other += ''.join(',%s=%s' % (k, v.replace(',', ',,'))
                     for k, v in OTHER_ID.items())
    return [
        # 01:00.0 and 02:00.0: behind root ports (buses 1 and 2)
        '-device', 'pcie-root-port,id=rp2,chassis=1,slot=2,addr=02.0',
        '-device', 'ndk-pcie-telemetry,bus=rp2',
        '-device', 'pcie-root-port,id=rp3,chassis=1,slot=3,addr=03.0',
        '-device', other,
        # 00:06.0: on the root bus; two DMA ports tell its readings apart
        '-device', 'ndk-pcie-telemetry,addr=06.0,dma-ports=2',
    ]


def skip(desc, reason):
    tests.append(('%s # SKIP %s' % (desc, reason), True, ''))


def build_standin():
    """(status, the module's path or the reason it is missing, seconds)"""
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(STANDIN, 'build.sh'),
                        os.path.join(BUILD, 'tests/nfb-standin')],
                       capture_output=True, text=True)
    took = time.monotonic() - t0
    if p.returncode == 0:
        return 0, p.stdout.strip(), took
    return p.returncode, (p.stderr.strip().splitlines() or ['?'])[-1], took


def run_guest(initrd, append=''):
    env = dict(os.environ)
    if append:
        env['GUEST_APPEND'] = append
    else:
        env.pop('GUEST_APPEND', None)
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(REPO, 'scripts/guest-run.sh'), initrd]
                       + qemu_args(), capture_output=True, text=True,
                       errors='replace', env=env)
    console = p.stdout + p.stderr
    return p.returncode, console, guest_steps(console), time.monotonic() - t0


def step_of(steps, name):
    return steps.get(name, (None, ''))


def lnk(out, reg):
    """(speed, width) of lspci's LnkCap or LnkSta line."""
    m = re.search(r'^\s*%s:\s+(?:Port #\d+, )?Speed ([^ ,]+)[^,]*, '
                  r'Width x(\d+)' % reg, out, re.M)
    return (m.group(1), int(m.group(2))) if m else None


def check_lspci(steps):
    rc, out = step_of(steps, 'lspci')
    check('lspci -nn runs in the guest', rc == 0, out)
    for slot, cls in (('00:02.0', r'PCI bridge \[0604\].*\[1b36:000c\]'),
                      ('00:03.0', r'PCI bridge \[0604\].*\[1b36:000c\]'),
                      ('01:00.0', r'\[1234:0d7b\]'),
                      ('02:00.0', r'\[18ec:c000\]'),
                      ('00:06.0', r'\[1234:0d7b\]')):
        check('lspci: %s is %s' % (slot, cls.replace('\\', '')),
              re.search(r'^%s .*%s' % (re.escape(slot), cls), out, re.M),
              out)
    for name, slot, link in (('default', '01:00.0', DEFAULT_LINK),
                             ('other', '02:00.0', OTHER_LINK)):
        rc, out = step_of(steps, 'lspci-' + name)
        check('lspci -vv -s %s: an Express endpoint' % slot,
              rc == 0 and re.search(r'Express \(v2\) Endpoint', out), out)
        check('lspci -vv -s %s: MSI, disabled, one vector, 64-bit, not '
              'maskable' % slot,
              re.search(r'MSI: Enable- Count=1/1 Maskable- 64bit\+', out),
              out)
        for reg in ('LnkCap', 'LnkSta'):
            got = lnk(out, reg)
            check('lspci -vv -s %s: %s %s x%d (%s)'
                  % (slot, reg, link[0], link[1],
                     '%s x%d' % got if got else 'none'), got == link, out)
    # on the root bus of q35 the card is an integrated endpoint: no link
    rc, out = step_of(steps, 'lspci-root-bus')
    check('lspci -vv -s 00:06.0: on the root bus a Root Complex Integrated '
          'Endpoint with MSI and no link registers',
          rc == 0 and re.search(r'Express \(v2\) Root Complex Integrated '
                                r'Endpoint', out) and
          re.search(r'MSI: Enable- Count=1/1', out) and 'LnkCap' not in out,
          out)


def list_block(out, slot):
    """The lines of --list about one card: from its slot to the next."""
    m = re.search(r'^.*%s.*\n((?:\s+.*\n?)*)' % re.escape(slot), out, re.M)
    return m.group(0) if m else ''


def check_list(steps):
    rc, out = step_of(steps, 'list')
    check('--list exits 0 and lists the three cards', rc == 0 and all(
        s in out for s in ('0000:01:00.0', '0000:02:00.0', '0000:00:06.0')),
        out)
    for slot, link, ident in (('0000:01:00.0', DEFAULT_LINK, DEFAULT_SHOWN),
                              ('0000:02:00.0', OTHER_LINK, OTHER_SHOWN)):
        blk = list_block(out, slot)
        speed = link[0].replace('GT/s', '')
        check('--list: %s has a link of %s GT/s x%d' % (slot, speed, link[1]),
              re.search(r'(?<![\d.])%s(?:\.0)? ?GT/s.{0,20}x%d\b'
                        % (re.escape(speed), link[1]), blk),
              blk or out)
        for key, val in ident.items():
            check('--list: %s shows %s "%s"' % (slot, key, val),
                  val in blk, blk or out)


def check_driver_strict(steps):
    rc, out = step_of(steps, 'insmod')
    check('insmod of the stand-in succeeds', rc == 0, out)
    rc, out = step_of(steps, 'dmesg')
    check('the stand-in refuses the card on the root bus as nfb does',
          re.search(r'0000:00:06\.0: attaching an nfb card to the root PCI '
                    r'bus is not supported', out), out)
    for n, slot in ((0, '01:00.0'), (1, '02:00.0')):
        check('the stand-in binds %s as /dev/nfb%d with MSI' % (slot, n),
              re.search(r'0000:%s: stand-in for nfb: /dev/nfb%d, BARs '
                        r'claimed, MSI on' % (re.escape(slot), n), out), out)
    rc, out = step_of(steps, 'nfb')
    devs = re.findall(r'^(nfb\d+) (\S+) (\d+):(\d+) character special file '
                      r'([0-9a-f]+):([0-9a-f]+)$', out, re.M)
    check('/sys/class/nfb: nfb0 and nfb1 only, their device links the cards',
          [(d[0], d[1]) for d in devs] ==
          [('nfb0', '0000:01:00.0'), ('nfb1', '0000:02:00.0')], out)
    check('/dev/nfb0 and /dev/nfb1 are character devices of the class '
          'devices\' numbers', len(devs) == 2 and all(
              (int(d[2]), int(d[3])) == (int(d[4], 16), int(d[5], 16))
              for d in devs) and
          re.findall(r'^node (\S+)$', out, re.M) == ['nfb0', 'nfb1'], out)
    rc, out = step_of(steps, 'lspci-bound')
    check('lspci: nfb_standin is the driver of 01:00.0',
          re.search(r'Kernel driver in use: nfb_standin', out), out)
    check('lspci: the driver enabled MSI (Enable+)',
          re.search(r'MSI: Enable\+ Count=1/1 Maskable- 64bit\+', out), out)
    rc, out = step_of(steps, 'iomem')
    check('/proc/iomem: the stand-in claimed the BARs of both cards',
          len(re.findall(r'nfb_standin', out)) == 2, out)

    msg = (r'^pcie-telemetry: mapping BAR0 of 0000:%s was refused \([^)]+\): '
           r'.*nfb_standin owns the BAR boot with iomem=relaxed')
    for step, slot in (('read-nfb0', '01:00.0'), ('read-nfb1', '02:00.0'),
                       ('read-class', '02:00.0')):
        rc, out = step_of(steps, step)
        check('without iomem=relaxed: %s (%s) fails with exit 4 and one '
              'line that says to boot with iomem=relaxed'
              % (step.replace('read-', ''), slot),
              rc == 4 and len(out.strip().splitlines()) == 1 and
              re.search(msg % re.escape(slot), out), out)


def reads(steps, step, endpoints, ports, desc):
    rc, out = step_of(steps, step)
    try:
        doc = json_docs(out)[0]
        cfg = doc['data']['config']
        ok = (rc == 0 and cfg['pcie_endpoints'] == endpoints and
              cfg['dma_ports'] == ports and
              doc['data']['endpoints'][0]['pcie_cycles'] > 0)
        check(desc, ok, out[:1500])
        return doc
    except (ValueError, KeyError, IndexError, TypeError) as e:
        check(desc, False, '%r\n%s' % (e, out[:1500]))
        return None


def check_common_after(steps, mode):
    reads(steps, 'read-root-bus', 1, 2, '%s: the card on the root bus, '
          'which no driver owns, reads' % mode)
    rc, out = step_of(steps, 'rmmod')
    check('%s: rmmod of the stand-in succeeds' % mode, rc == 0, out)
    rc, out = step_of(steps, 'nfb-after')
    check('%s: after rmmod no nfb device is left' % mode,
          rc == 0 and 'nfb' not in out, out)
    reads(steps, 'read-after', 1, 1, '%s: 01:00.0 reads once the driver '
          'is gone' % mode)


def main():
    notes = []
    consoles = []
    status, module, took = build_standin()
    if status == 0:
        notes.append('the stand-in built (or found up to date) in %.1f s'
                     % took)
    elif status != 77:
        check('the stand-in for the nfb driver builds', False, module)
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        lspci = subprocess.run([os.path.join(REPO,
                                             'scripts/guest-lspci-files.sh')],
                               check=True, capture_output=True,
                               text=True).stdout.split()
        extra = ['%s:%s' % (module, MODULE_PATH)] if status == 0 else []
        tool_initrd(initrd, 'guest/e2e-ndk-host.sh', lspci + extra)

        rc, console, steps, t = run_guest(initrd)
        consoles.append(('guest without iomem=relaxed', console.splitlines()))
        notes.append('guest without iomem=relaxed: %.1f s' % t)
        check('strict guest: ran all steps to its end',
              rc == 0 and re.search(r'^GUEST-EXIT 0', console, re.M),
              console[-2000:])
        check('strict guest: no iomem=relaxed on the kernel command line',
              'iomem=relaxed' not in step_of(steps, 'cmdline')[1] and
              step_of(steps, 'cmdline')[0] == 0, step_of(steps, 'cmdline'))
        check_lspci(steps)
        check_list(steps)
        if status == 0:
            check_driver_strict(steps)
            check_common_after(steps, 'strict guest')

            rc, console, steps, t = run_guest(initrd, 'iomem=relaxed')
            consoles.append(('guest with iomem=relaxed',
                             console.splitlines()))
            notes.append('guest with iomem=relaxed: %.1f s' % t)
            check('relaxed guest: ran all steps to its end',
                  rc == 0 and re.search(r'^GUEST-EXIT 0', console, re.M),
                  console[-2000:])
            check('relaxed guest: iomem=relaxed on the kernel command line',
                  re.search(r'\biomem=relaxed\b',
                            step_of(steps, 'cmdline')[1]))
            out = step_of(steps, 'nfb')[1]
            check('relaxed guest: the stand-in gives /dev/nfb0 for 01:00.0',
                  re.search(r'^nfb0 0000:01:00\.0 ', out, re.M), out)
            rc, out = step_of(steps, 'lspci-bound')
            check('relaxed guest: nfb_standin is the driver of 01:00.0',
                  re.search(r'Kernel driver in use: nfb_standin', out), out)
            doc = reads(steps, 'read-nfb0', 1, 1, 'with iomem=relaxed: '
                        'pcie-telemetry -d /dev/nfb0 reads 01:00.0 while '
                        'the driver owns it')
            if doc:
                mhz = (doc['data']['endpoints'][0]['pcie_cycles'] /
                       doc['seconds'] / 1e6)
                check('with iomem=relaxed: /dev/nfb0 counts a 400 MHz clock '
                      '(%.1f MHz)' % mhz, 340 <= mhz <= 460)
            reads(steps, 'read-nfb1', 2, 1, 'with iomem=relaxed: -d '
                  '/dev/nfb1 reads 02:00.0 (2 endpoints)')
            reads(steps, 'read-class', 2, 1, 'with iomem=relaxed: -d '
                  '/sys/class/nfb/nfb1 reads 02:00.0')
            check_common_after(steps, 'relaxed guest')
        else:
            skip('the stand-in for the nfb driver binds the cards, '
                 '/dev/nfbN, iomem=relaxed', module)
    return report(consoles, notes)


if __name__ == '__main__':
    sys.exit(main())
