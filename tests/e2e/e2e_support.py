# SPDX-License-Identifier: GPL-2.0-or-later
#
# What the guest tests of pcie-telemetry share: where the repository and
# the build are, the guest's initramfs with the tool, the tool's JSON
# output as documents, and the TAP report of the checks.
import json
import os
import re
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get('PTM_BUILD_DIR', os.path.join(REPO, 'build'))

tests = []


def check(desc, ok, detail=''):
    tests.append((desc, bool(ok), detail))


def tool_initrd(path, main_script):
    """An initramfs at path: busybox, the tool with its libraries, and
    main_script (relative to the repository) as the guest's main."""
    files = subprocess.run([os.path.join(REPO, 'scripts/guest-tool-files.sh'),
                            BUILD], check=True, capture_output=True,
                           text=True).stdout.split()
    subprocess.run([os.path.join(REPO, 'scripts/guest-initramfs.sh'), path,
                    os.path.join(REPO, main_script)] + files, check=True)


def guest_steps(console):
    """The runs a guest script printed between '=== STEP name' and
    '=== RC name status': {name: (status, output)}."""
    steps, cur, lines = {}, None, []
    for line in console.splitlines():
        line = line.rstrip('\r')
        m = re.match(r'^=== (STEP|RC) (\S+)(?: (\d+))?$', line)
        if m and m.group(1) == 'STEP':
            cur, lines = m.group(2), []
        elif m and cur == m.group(2):
            steps[cur] = (int(m.group(3)), '\n'.join(lines))
            cur = None
        elif cur:
            lines.append(line)
    return steps


def json_docs(text):
    """The JSON documents the tool printed one after the other."""
    dec, docs, i = json.JSONDecoder(), [], 0
    text = text.strip()
    while i < len(text):
        obj, end = dec.raw_decode(text, i)
        docs.append(obj)
        i = end
        while i < len(text) and text[i].isspace():
            i += 1
    return docs


def report(consoles, notes=()):
    """Print the checks as TAP; on a failure also the tail of each
    (name, lines) console. Returns the exit status."""
    print('1..%d' % len(tests))
    for note in notes:
        print('# ' + note)
    for i, (desc, ok, detail) in enumerate(tests, 1):
        print('%s %d - %s' % ('ok' if ok else 'not ok', i, desc))
        if not ok and detail:
            for ln in str(detail).splitlines()[:60]:
                print('# ' + ln)
    passed = all(ok for _, ok, _ in tests)
    if not passed:
        for name, lines in consoles:
            print('# %s (tail):' % name)
            for ln in lines[-40:]:
                print('# ' + ln)
    return 0 if passed else 1
