#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# pciutils 3.15 in the 6.12 guest: scripts/pciutils.sh's lspci and setpci
# (Debian's binaries, unmodified, on Debian unstable's libraries) are the
# ones on the guest's PATH and read a dwc-pcie-root-port at 64 GT/s
# (x-speed=64) with the card below it:
#   - lspci --version and setpci --version say 3.15;
#   - lspci -nn names the port (1ded:8000) and the card (1234:0d7b, 01:00.0);
#   - lspci -vvv: the port's LnkCap is Speed 64GT/s and its LnkCap2 line
#     shows Supported Link Speeds 2.5-64GT/s (Debian 12's lspci 3.9 knows
#     no 64GT/s); the card is a PCIe endpoint with its link;
#   - setpci reads the same from the register: Link Capabilities 2
#     (CAP_EXP+0x2c) with the Supported Link Speeds Vector 2.5 to 64 GT/s
#     (bits 1 to 6).
# Prints the checks as TAP and the two devices' lspci -vvv as comments.
# Exit 0 all passed, 1 not (also when scripts/pciutils.sh fails), 77
# (skipped) only when the 6.12 kernel cannot be made here, as guest-dwc.py.
import os
import re
import subprocess
import sys

from e2e_support import (REPO, check, lspci_devices, pciutils_dir,
                          pciutils_guest, report)

K612 = os.path.join(REPO, 'scripts/guest-kernel-612.sh')
PORT_ID, CARD_ID = '1ded:8000', '1234:0d7b'
QEMU_ARGS = [
    '-device', 'dwc-pcie-root-port,id=rp0,chassis=1,slot=1,x-speed=64',
    '-device', 'ndk-pcie-telemetry,bus=rp0',
]
COMMANDS = [
    ('kernel', 'uname -r'),
    ('which-lspci', 'command -v lspci'),
    ('which-setpci', 'command -v setpci'),
    ('lspci-version', 'lspci --version'),
    ('setpci-version', 'setpci --version'),
    ('lspci-nn', 'lspci -nn'),
    ('lspci-vvv', 'lspci -vvv'),
    # Link Capabilities 2 of the port, by the name of its capability
    ('setpci-lnkcap2', 'setpci -d %s CAP_EXP+0x2c.l' % PORT_ID),
]
# lspci's note that the guest has no module index (no /lib/modules)
KMOD_NOTE = re.compile(r'^lspci: Unable to load libkmod resources.*$', re.M)


def main():
    k = subprocess.run([K612], stdout=subprocess.PIPE, text=True)
    if k.returncode == 77:
        print('1..0 # SKIP the 6.12 guest kernel cannot be made here '
              '(scripts/guest-kernel-612.sh exited 77)')
        return 77
    if k.returncode != 0 or not k.stdout.strip():
        check('guest-kernel-612.sh gives the 6.12 kernel', False,
              'exit %d' % k.returncode)
        return report([])
    release = subprocess.run([K612, '--release'], stdout=subprocess.PIPE,
                             text=True).stdout.strip()
    try:
        d = pciutils_dir()
    except subprocess.CalledProcessError as e:
        check('scripts/pciutils.sh makes pciutils 3.15', False,
              'exit %d (its reason above, on stderr)' % e.returncode)
        return report([])
    v = subprocess.run([os.path.join(d, 'bin/lspci'), '--version'],
                       capture_output=True, text=True)
    notes = ['pciutils 3.15 from scripts/pciutils.sh: %s' % d]
    check('scripts/pciutils.sh: its bin/lspci --version on the host says '
          '3.15 (%s)' % v.stdout.strip(),
          v.returncode == 0 and
          re.match(r'lspci version 3\.15(\.|$)', v.stdout.strip()),
          v.stdout + v.stderr)

    steps, console = pciutils_guest(COMMANDS, QEMU_ARGS,
                                    kernel=k.stdout.strip())

    def out(name):
        return steps.get(name, (None, ''))

    check('guest ran all commands to its end',
          re.search(r'^GUEST-EXIT 0', console, re.M), console[-3000:])
    check('guest kernel is %s' % release,
          out('kernel')[1].strip() == release, out('kernel')[1])
    for prog in ('lspci', 'setpci'):
        rc, text = out('which-' + prog)
        check('%s on the guest\'s PATH is /opt/pciutils/bin/%s'
              % (prog, prog),
              rc == 0 and text.strip() == '/opt/pciutils/bin/' + prog, text)
        rc, text = out(prog + '-version')
        notes.append('guest: %s --version: %s' % (prog, text.strip()))
        check('%s --version in the guest says %s version 3.15 (%s)'
              % (prog, prog, text.strip()),
              rc == 0 and re.match(r'%s version 3\.15(\.|$)' % prog,
                                   text.strip()), text)

    rc, nn = out('lspci-nn')
    nn = KMOD_NOTE.sub('', nn)
    port = re.findall(r'^(\S+) .*\[%s\]' % PORT_ID, nn, re.M)
    card = re.findall(r'^(\S+) .*\[%s\]' % CARD_ID, nn, re.M)
    check('lspci -nn: one port [%s] and the card [%s] at 01:00.0'
          % (PORT_ID, CARD_ID),
          rc == 0 and len(port) == 1 and card == ['01:00.0'], nn)
    port = port[0] if port else '00:01.0'

    rc, vvv = out('lspci-vvv')
    devs = lspci_devices(KMOD_NOTE.sub('', vvv))
    check('lspci -vvv runs and shows the port %s and the card 01:00.0'
          % port, rc == 0 and port in devs and '01:00.0' in devs,
          vvv[-3000:])
    for addr, what in ((port, 'the port'), ('01:00.0', 'the card')):
        notes.append('guest: lspci -vvv, %s:' % what)
        notes += ['  ' + ln for ln in devs.get(addr, [])]
    p = '\n'.join(devs.get(port, []))
    c = '\n'.join(devs.get('01:00.0', []))

    def line(text, key):
        m = re.search(r'^\s*%s:?\s+(.*)$' % key, text, re.M)
        return m.group(1) if m else None

    check('lspci -vvv: the port is an Express Root Port',
          re.search(r'Express \(v2\) Root Port', p), p)
    check('lspci -vvv: the port\'s LnkCap: Speed 64GT/s (%s)'
          % line(p, 'LnkCap'),
          re.search(r'\bSpeed 64GT/s,', line(p, 'LnkCap') or ''), p)
    check('lspci -vvv: the port\'s LnkCap2: Supported Link Speeds: '
          '2.5-64GT/s (%s)' % line(p, 'LnkCap2'),
          re.match(r'Supported Link Speeds: 2\.5-64GT/s,',
                   line(p, 'LnkCap2') or ''), p)
    check('lspci -vvv: the card is an Express Endpoint with LnkCap, '
          'LnkSta and LnkCap2 (%s; %s; %s)'
          % (line(c, 'LnkCap'), line(c, 'LnkSta'), line(c, 'LnkCap2')),
          re.search(r'Express \(v2\) Endpoint', c) and
          line(c, 'LnkCap') and line(c, 'LnkSta') and line(c, 'LnkCap2'), c)

    rc, text = out('setpci-lnkcap2')
    notes.append('guest: setpci -d %s CAP_EXP+0x2c.l: %s'
                 % (PORT_ID, text.strip()))
    try:
        val = int(text.strip(), 16)
    except ValueError:
        val = None
    check('setpci -d %s CAP_EXP+0x2c.l: Supported Link Speeds Vector '
          '2.5 to 64 GT/s (bits 1-6: 0x7e of %s)' % (PORT_ID, text.strip()),
          rc == 0 and val is not None and val & 0xfe == 0x7e, text)
    return report([('guest console', console.splitlines())], notes)


if __name__ == '__main__':
    sys.exit(main())
