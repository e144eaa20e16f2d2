#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end: hot-unplug the virtual card while pcie-telemetry -w reads it
# in a Linux guest (guest/e2e-unplug.sh). The card sits behind a PCIe root
# port; once the guest says the first report is out, device_del goes over
# QMP. Two guests run side by side, one per way the kernel learns of it:
#   acpi    q35's default, ACPI PCI hotplug: the kernel removes the card at
#           once and ejects it
#   pciehp  native PCIe hotplug: the attention button, 5 s of grace, then
#           removal and slot power off
# In both the card's sysfs directory goes first and the BAR then reads 0
# (QEMU's answer for an address nobody decodes) without a bus error, so
# only the library's presence check notices. The tool must end with exit 11
# and one line naming the card, after at least one good report and none
# made of the zeros. TAP output; bounded to a minute.
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from e2e_support import Qmp, REPO, check, json_docs, report, tool_initrd

CARD = '0000:01:00.0'
# QEMU's own bound (guest-run.sh) and ours, a little later
GUEST_TIMEOUT = 50
KILL_AFTER = 55

VARIANTS = [
    ('acpi', []),
    ('pciehp', ['-global', 'ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off']),
]

def unplug(sock, res):
    """
    device_del, then the moment QEMU has taken the card off its bus (its
    entry under /machine/peripheral goes), then DEVICE_DELETED, which QEMU
    sends only once the device object is freed.
    """
    try:
        qmp = Qmp(sock)
        res['del_reply'] = qmp.command('device_del', id='card0')
        while time.monotonic() - res['t_del'] < 30:
            r = qmp.command('qom-list', path='/machine/peripheral')
            if r is None or 'error' in r:
                return
            if 'card0' not in [p['name'] for p in r['return']]:
                res['t_unplugged'] = time.monotonic()
                res['deleted'] = qmp.wait_event('DEVICE_DELETED', 5)
                return
            time.sleep(0.05)
    except (OSError, ValueError) as e:
        res.setdefault('del_reply', repr(e))


def run_variant(name, extra, initrd, tmp, res):
    sock = os.path.join(tmp, name + '.qmp')
    env = dict(os.environ, GUEST_TIMEOUT=str(GUEST_TIMEOUT))
    p = subprocess.Popen(
        [os.path.join(REPO, 'scripts/guest-run.sh'), initrd,
         '-qmp', 'unix:%s,server=on,wait=off' % sock,
         '-device', 'pcie-root-port,id=rp1,chassis=1,slot=1',
         '-device', 'ndk-pcie-telemetry,bus=rp1,id=card0'] + extra,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        errors='replace', env=env, start_new_session=True)
    killer = threading.Timer(KILL_AFTER, os.killpg, (p.pid, signal.SIGKILL))
    killer.start()
    res.update(lines=[], t0=time.monotonic())
    waiter = None
    try:
        for line in p.stdout:
            line = line.rstrip('\r\n')
            res['lines'].append(line)
            if line == '=== UNPLUG' and 't_del' not in res:
                # QMP in its own thread: the console must keep flowing
                res['t_del'] = time.monotonic()
                waiter = threading.Thread(target=unplug, args=(sock, res))
                waiter.start()
            elif line.startswith('=== RC unplug '):
                res['t_rc'] = time.monotonic()
        p.wait()
    finally:
        killer.cancel()
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        if waiter:
            waiter.join(5)
    res['t_end'] = time.monotonic()
    res['status'] = p.returncode


def section(lines, name):
    out, on = [], False
    for line in lines:
        if line.startswith('=== '):
            on = line == '=== ' + name
        elif on:
            out.append(line)
    return out


def check_variant(name, res):
    lines = res.get('lines', [])
    console = '\n'.join(lines)
    check('%s: guest ran to its end' % name,
          re.search(r'^GUEST-EXIT 0', console, re.M), '\n'.join(lines[-30:]))
    check('%s: device_del accepted' % name,
          res.get('del_reply') == {'return': {}}, str(res.get('del_reply')))
    t_del = res.get('t_del')
    gone = res.get('t_unplugged')
    check('%s: QEMU took the card off the bus (%s after device_del)'
          % (name, '%.2f s' % (gone - t_del) if gone else 'not'), gone)
    check('%s: QEMU freed the device (DEVICE_DELETED)' % name,
          res.get('deleted'))
    m = re.search(r'^=== RC unplug (\S+)$', console, re.M)
    rc = m.group(1) if m else None
    took = ('%.2f s' % (res['t_rc'] - t_del) if 't_rc' in res and t_del
            else '?')
    check('%s: the tool ended with exit 11 (PTL_E_GONE), %s after '
          'device_del' % (name, took), rc == '11', 'exit status %s' % rc)
    err = section(lines, 'STDERR')
    check('%s: one line on stderr naming the card' % name,
          len(err) == 1 and re.match(r'^pcie-telemetry: %s disappeared '
                                     r'\(.+\)$' % re.escape(CARD), err[0]),
          '\n'.join(err))
    out = '\n'.join(section(lines, 'STDOUT'))
    try:
        docs = json_docs(out)
    except ValueError as e:
        docs = None
        check('%s: the reports are whole JSON documents' % name, False,
              '%r\n%s' % (e, out[-1000:]))
    if docs is not None:
        # a reading of the removed card reads 0: its cycle count would be
        # 2^48 minus the last one, or 0
        bad = []
        for d in docs:
            try:
                cyc = d['data']['endpoints'][0]['pcie_cycles']
                mhz = cyc / d['seconds'] / 1e6
                if not 200 <= mhz <= 600:
                    bad.append('%d cycles in %.3f s' % (cyc, d['seconds']))
            except (KeyError, IndexError, TypeError, ZeroDivisionError) as e:
                bad.append(repr(e))
        check('%s: %d report(s) before the removal, each of a 400 MHz card'
              % (name, len(docs)), docs and not bad, '\n'.join(bad))
    check('%s: the card\'s sysfs directory is gone afterwards' % name,
          re.search(r'^=== SYSFS gone$', console, re.M))
    check('%s: no crash (no fault or core in the console)' % name,
          not re.search(r'segfault|traps:|Bus error|core dumped|Oops',
                        console), console[-2000:])


def main():
    t0 = time.monotonic()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        tool_initrd(initrd, 'guest/e2e-unplug.sh')
        threads = []
        for name, extra in VARIANTS:
            results[name] = {}
            th = threading.Thread(target=run_variant,
                                  args=(name, extra, initrd, tmp,
                                        results[name]))
            th.start()
            threads.append(th)
        for th in threads:
            th.join()
    for name, _ in VARIANTS:
        check_variant(name, results[name])

    # a figure, not a check: each guest is killed after KILL_AFTER seconds
    return report([('%s guest console' % name, results[name].get('lines', []))
                   for name, _ in VARIANTS],
                  ['both guests took %.1f s' % (time.monotonic() - t0)])


if __name__ == '__main__':
    sys.exit(main())
