#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# End to end: a guest on QEMU's user network (virtio-net, the kernel's
# modules loaded by /net-up.sh) serves a file with busybox httpd on port
# 8080, and the host fetches it through a port forwarded on 127.0.0.1
# (guest/e2e-net.sh); then the host tells the guest to end and it powers
# off. The file holds a token the guest drew at random and printed on its
# console, so only this guest's server can have answered. Skipped when the
# QEMU lacks the user network (built without libslirp). TAP output.
import http.client
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request

from e2e_support import (GuestProcess, check, guest_initrd, net_files,
                          report, user_net_missing)

PORT = 8080


def fetch(url, seconds=10):
    """(HTTP status, body, tries) of a GET; connection errors are retried
    for a few seconds (slirp accepts the host's connection before the guest
    does, and resets it if nothing listens yet); status None if none got
    through."""
    end, tries, err = time.monotonic() + seconds, 0, None
    while True:
        tries += 1
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                return r.status, r.read().decode('utf-8', 'replace'), tries
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode('utf-8', 'replace'), tries
        except (urllib.error.URLError, http.client.HTTPException,
                OSError) as e:
            err = e
        if time.monotonic() > end:
            return None, repr(err), tries
        time.sleep(0.2)


def main():
    why = user_net_missing()
    if why:
        print('1..0 # SKIP ' + why)
        return 0
    notes = []
    with tempfile.TemporaryDirectory() as tmp:
        initrd = os.path.join(tmp, 'initrd.gz')
        guest_initrd(initrd, 'guest/e2e-net.sh', net_files())
        with GuestProcess(initrd, forwards=[PORT], timeout=90) as g:
            m = g.wait_for(r'^=== (SERVING (\S+)|NET failed.*)$', 60)
            serving = m and m.group(2)
            check('the guest brings up eth0 and serves HTTP on port %d'
                  % PORT, serving, m and m.group(0))
            if serving:
                notes.append('serving %.1f s after the start' % g.seen)
                url = g.url(PORT, '/hello.txt')
                status, body, tries = fetch(url)
                check('the host fetches %s (status %s after %d tries)'
                      % (url, status, tries), status == 200, body)
                check('the file holds the token the guest drew',
                      body == 'guest-net %s\n' % serving, repr(body))
                status, body, _ = fetch(g.url(PORT, '/nothing-here'))
                check('a missing file: 404 from the guest\'s server',
                      status == 404, '%s %s' % (status, body[:200]))
                g.send('done')
            rc = g.wait(30)
            notes.append('the guest ended %.1f s after the start'
                         % (time.monotonic() - g.t0))
            console = g.console
            lines = list(g.lines)
    m = re.search(r'^=== NET up (\S+)$', console, re.M)
    check('/net-up.sh loads the modules and eth0 comes up (%s s)'
          % (m.group(1) if m else '-'), m)
    check('eth0 is at QEMU\'s user address 10.0.2.15/24',
          re.search(r'^=== ADDR 10\.0\.2\.15/24$', console, re.M))
    check('the default route goes through 10.0.2.2',
          re.search(r'^=== ROUTE default via 10\.0\.2\.2 dev eth0', console,
                    re.M))
    check('the guest reads the host\'s "done" on /dev/ttyS1',
          re.search(r'^=== HOST done$', console, re.M))
    check('the guest powers off with its main\'s status 0 (GUEST-EXIT 0)',
          rc == 0 and re.search(r'^GUEST-EXIT 0', console, re.M),
          'guest-run.sh status %s' % rc)
    return report([('guest console', lines)], notes)


if __name__ == '__main__':
    sys.exit(main())
