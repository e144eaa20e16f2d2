#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run examples/qtest/'s pytest example as docs/python.md says a user
does: a copy of the directory outside the clone, and there

    PYTHONPATH=<clone>/python QTEST_QEMU_BINARY=<qemu> \
        /usr/bin/python3 -m pytest -p ndk_telemetry.pytest_plugin -q

Exit 77 (skipped) without pytest; fails without QEMU, and when pytest
skips or fails anything (a skipped example is no pass).
"""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PYTHON = '/usr/bin/python3'


def main():
    probe = subprocess.run([PYTHON, '-c', 'import pytest'],
                           capture_output=True, text=True)
    if probe.returncode:
        print('SKIP: pytest is not installed for %s (Debian: apt-get install '
              'python3-pytest)' % PYTHON)
        return 77
    qemu = os.environ.get('QTEST_QEMU_BINARY', '')
    if not qemu or not os.access(qemu, os.X_OK):
        print('FAIL: QTEST_QEMU_BINARY=%r is not an executable QEMU: run '
              'scripts/setup.sh' % qemu)
        return 1
    tmp = tempfile.mkdtemp(prefix='ndk-example-')
    if os.path.realpath(tmp).startswith(os.path.realpath(REPO) + os.sep):
        shutil.rmtree(tmp)
        tmp = tempfile.mkdtemp(prefix='ndk-example-', dir='/tmp')
    try:
        work = os.path.join(tmp, 'qtest')
        shutil.copytree(os.path.join(REPO, 'examples', 'qtest'), work)
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, 'python'),
                   QTEST_QEMU_BINARY=qemu)
        cmd = [PYTHON, '-m', 'pytest', '-p', 'ndk_telemetry.pytest_plugin',
               '-q']
        print('in %s: %s' % (work, ' '.join(cmd)), flush=True)
        r = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        print(r.stdout)
        summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() \
            else ''
        if r.returncode != 0:
            print('FAIL: pytest exited %d' % r.returncode)
            return 1
        if 'passed' not in summary or any(
                w in summary for w in ('skipped', 'failed', 'error',
                                       'xfail', 'deselected')):
            print('FAIL: not every example passed: %r' % summary)
            return 1
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
