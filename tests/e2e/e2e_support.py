# SPDX-License-Identifier: GPL-2.0-or-later
#
# What the guest tests of pcie-telemetry share: where the repository and
# the build are, the guest's initramfs with the tool, the tool's JSON
# output as documents, the TAP report of the checks, and a guest in the
# background with a network to the host (GuestProcess).
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BUILD = os.environ.get('PTM_BUILD_DIR', os.path.join(REPO, 'build'))
# the QEMU that scripts/guest-run.sh boots
QEMU = os.environ.get('QEMU', os.path.join(REPO, 'build/qemu-system-x86_64'))

tests = []


def check(desc, ok, detail=''):
    tests.append((desc, bool(ok), detail))


K612 = os.path.join(REPO, 'scripts/guest-kernel-612.sh')


class Guest612:
    """The 6.12 guest's parts from scripts/guest-kernel-612.sh: kernel,
    release, and files (FILE:PATH pairs for an initramfs): dwc_pcie_pmu.ko
    as /lib/modules/dwc_pcie_pmu.ko, with ptt also hisi_ptt.ko, with xdata
    also dw-xdata-pcie.ko, and perf with its libraries. skip: the kernel
    cannot be made here (the script exited 77); error: what failed
    otherwise, else None."""

    def __init__(self, ptt=False, xdata=False):
        def run(*args):
            return subprocess.run([K612] + list(args),
                                  stdout=subprocess.PIPE, text=True)

        k = run()
        self.skip = k.returncode == 77
        self.kernel = k.stdout.strip()
        self.release = self.error = None
        self.files = []
        if self.skip:
            return
        parts = [('--module', '/lib/modules/dwc_pcie_pmu.ko')]
        if ptt:
            parts.append(('--ptt-module', '/lib/modules/hisi_ptt.ko'))
        if xdata:
            parts.append(('--xdata-module', '/lib/modules/dw-xdata-pcie.ko'))
        failed = [] if k.returncode == 0 and self.kernel else ['the kernel']
        for opt, dest in parts:
            r = run(opt)
            if r.returncode != 0 or not r.stdout.strip():
                failed.append(opt)
            self.files.append(r.stdout.strip() + ':' + dest)
        perf = run('--perf-files').stdout.split()
        if not perf:
            failed.append('--perf-files')
        self.files += perf
        self.release = run('--release').stdout.strip()
        if failed:
            self.error = ('guest-kernel-612.sh gives %s: no (kernel exit %d)'
                          % (', '.join(failed), k.returncode))

    def skip_line(self):
        return ('1..0 # SKIP the 6.12 guest kernel cannot be made here '
                '(scripts/guest-kernel-612.sh exited 77)')


ARM64 = os.path.join(REPO, 'scripts/guest-arm64.sh')
QEMU_ARM64 = os.path.join(BUILD, 'qemu-system-aarch64')


class Arm64Guest:
    """The arm64 guest's parts from scripts/guest-arm64.sh: kernel
    (Debian's 6.12 arm64 Image), release, busybox, and files (FILE:PATH
    pairs for an initramfs): the cross-built pcie-telemetry with its
    libraries, dwc_pcie_pmu.ko and hisi_ptt.ko in /lib/modules, perf with
    its libraries. skip: they cannot be made here (the script exited 77);
    error: what failed otherwise (also a missing build/qemu-system-
    aarch64: scripts/setup.sh --arm64 builds it), else None."""

    def __init__(self):
        def run(*args):
            return subprocess.run([ARM64] + list(args),
                                  stdout=subprocess.PIPE, text=True)

        k = run('--image')
        self.skip = k.returncode == 77
        self.kernel = k.stdout.strip()
        self.release = self.error = self.busybox = None
        self.files = []
        if self.skip:
            return
        failed = [] if k.returncode == 0 and self.kernel else ['--image']
        for opt, dest in (('--dwc-module', '/lib/modules/dwc_pcie_pmu.ko'),
                          ('--ptt-module', '/lib/modules/hisi_ptt.ko')):
            r = run(opt)
            if r.returncode != 0 or not r.stdout.strip():
                failed.append(opt)
            self.files.append(r.stdout.strip() + ':' + dest)
        for opt in ('--perf-files', '--tool-files'):
            r = run(opt)
            if r.returncode != 0 or not r.stdout.split():
                failed.append(opt)
            self.files += r.stdout.split()
        r = run('--busybox')
        self.busybox = r.stdout.strip()
        if r.returncode != 0 or not self.busybox:
            failed.append('--busybox')
        self.release = run('--release').stdout.strip()
        if failed:
            self.error = ('guest-arm64.sh gives %s: no' % ', '.join(failed))
        elif not os.access(QEMU_ARM64, os.X_OK):
            self.error = ('%s is missing: scripts/setup.sh --arm64 builds it'
                          % QEMU_ARM64)

    def skip_line(self):
        return ('1..0 # SKIP the arm64 guest cannot be made here '
                '(scripts/guest-arm64.sh exited 77)')


def guest_initrd(path, main_script, files=(), busybox=None):
    """An initramfs at path: busybox (the host's, or the binary busybox
    names), main_script (relative to the repository) as the guest's main
    and the FILE:PATH pairs of files."""
    env = dict(os.environ, BUSYBOX=busybox) if busybox else None
    subprocess.run([os.path.join(REPO, 'scripts/guest-initramfs.sh'), path,
                    os.path.join(REPO, main_script)] + list(files),
                   check=True, env=env)


def tool_initrd(path, main_script, files=()):
    """An initramfs at path: busybox, the tool with its libraries, and
    main_script (relative to the repository) as the guest's main, plus the
    FILE:PATH pairs of files (e.g. net_files())."""
    tool = subprocess.run([os.path.join(REPO, 'scripts/guest-tool-files.sh'),
                           BUILD], check=True, capture_output=True,
                          text=True).stdout.split()
    guest_initrd(path, main_script, tool + list(files))


def net_files():
    """The FILE:PATH pairs that give a guest its network: the kernel's
    virtio-net modules as /lib/modules/net/NN-name.ko in load order and
    guest/net-up.sh as /net-up.sh, which loads them and brings up eth0 at
    10.0.2.15/24 (run it as "sh /net-up.sh" in the guest's main)."""
    mods = subprocess.run([os.path.join(REPO, 'scripts/guest-kernel.sh'),
                           '--net-modules'], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.split()
    return (['%s:/lib/modules/net/%02d-%s' % (m, i, os.path.basename(m))
             for i, m in enumerate(mods, 1)] +
            [os.path.join(REPO, 'guest/net-up.sh') + ':/net-up.sh'])


PCIUTILS_GUEST_DIR = '/opt/pciutils'


def pciutils_dir():
    """The directory of pciutils 3.15 that scripts/pciutils.sh makes (in
    the cache; fetched from Debian unstable on first use): bin/lspci and
    bin/setpci, which also run on the host, and their root. Raises
    subprocess.CalledProcessError (its stderr saying why) if it cannot be
    made."""
    return subprocess.run([os.path.join(REPO, 'scripts/pciutils.sh')],
                          check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()


def pciutils_files():
    """The FILE:PATH pair for guest_initrd() or tool_initrd() that puts
    pciutils 3.15 (pciutils_dir()) into the guest as /opt/pciutils, whose
    bin/ guest/init puts first on PATH: lspci and setpci in the guest are
    then 3.15's (Debian 12's lspci of scripts/guest-lspci-files.sh stays
    /usr/bin/lspci)."""
    return ['%s:%s' % (pciutils_dir(), PCIUTILS_GUEST_DIR)]


def guest_commands(commands, qemu_args=(), files=(), kernel=None,
                   timeout=240, tool=False, arm64=None):
    """Boot a guest (scripts/guest-run.sh) whose main runs each (name,
    shell command) of commands in turn, stdout and stderr together, between
    the markers guest_steps() reads, then ends with 0. files: further
    FILE:PATH pairs for its initramfs (guest_initrd()); kernel: a kernel to
    boot instead of scripts/guest-kernel.sh's (e.g. scripts/guest-kernel-
    612.sh's); qemu_args: the devices; timeout: seconds for the whole run;
    tool: the initramfs has pcie-telemetry too (tool_initrd()); arm64:
    an Arm64Guest to boot instead (its kernel, busybox and files, the
    tool among them).
    Returns (steps, console): guest_steps() of the console, {name: (exit
    status, output)}, and the console without carriage returns (it ends
    with "GUEST-EXIT 0" when the guest ran all commands)."""
    with tempfile.TemporaryDirectory() as tmp:
        main = os.path.join(tmp, 'guest-main.sh')
        with open(main, 'w') as f:
            f.write('#!/bin/sh\n')
            for name, cmd in commands:
                f.write('echo "=== STEP %s"\n' % name)
                f.write('sh -c %s 2>&1\n' % shlex.quote(cmd))
                f.write('echo "=== RC %s $?"\n' % name)
            f.write('exit 0\n')
        initrd = os.path.join(tmp, 'initrd.gz')
        env = dict(os.environ, GUEST_TIMEOUT=str(timeout))
        if arm64:
            guest_initrd(initrd, main, arm64.files + list(files),
                         arm64.busybox)
            env.update(GUEST_ARCH='arm64', QEMU=QEMU_ARM64)
            kernel = kernel or arm64.kernel
        else:
            (tool_initrd if tool else guest_initrd)(initrd, main, files)
        if kernel:
            env['GUEST_KERNEL'] = kernel
        p = subprocess.run([os.path.join(REPO, 'scripts/guest-run.sh'),
                            initrd] + list(qemu_args), capture_output=True,
                           text=True, errors='replace', env=env)
    console = (p.stdout + p.stderr).replace('\r', '')
    return guest_steps(console), console


def pciutils_guest(commands, qemu_args=(), files=(), kernel=None,
                   timeout=240, tool=False):
    """guest_commands() in a guest that has pciutils 3.15
    (pciutils_files()): "lspci" and "setpci" in commands are 3.15's, e.g.
    pciutils_guest([('version', 'lspci --version'), ('vvv', 'lspci -vvv')],
    ['-device', 'dwc-pcie-root-port,id=rp0,chassis=1,slot=1',
     '-device', 'ndk-pcie-telemetry,bus=rp0']).
    Raises subprocess.CalledProcessError if scripts/pciutils.sh fails."""
    return guest_commands(commands, qemu_args,
                          pciutils_files() + list(files), kernel, timeout,
                          tool)


def lspci_devices(text):
    """The devices of lspci -v... output: {address: lines of its section}
    (the header line first), for addresses as lspci prints them."""
    devs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r'^([0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] ', line)
        if m:
            cur = line.split(' ', 1)[0]
            devs[cur] = [line]
        elif cur and line.strip():
            devs[cur].append(line)
    return devs


def user_net_missing():
    """Why QEMU cannot give a guest the user network (-netdev user, built
    with libslirp), or None if it can. None too if QEMU does not run at
    all: the test is then to fail, not to be skipped."""
    try:
        p = subprocess.run([QEMU, '-netdev', 'help'], capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0 or re.search(r'^user$', p.stdout, re.M):
        return None
    return ('%s has no user network (-netdev user): QEMU was built without '
            'libslirp; rerun scripts/setup.sh' % os.path.realpath(QEMU))


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on just now."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def session_pids(sid):
    """The processes of session sid (Linux /proc)."""
    pids = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                st = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...; comm may hold spaces;
        # a zombie has let go of all it held
        f = st[st.rindex(')') + 2:].split()
        if int(f[3]) == sid and f[0] != 'Z':
            pids.append(int(d))
    return pids


class GuestProcess:
    """
    A guest booted by scripts/guest-run.sh in the background, its console
    read line by line as it comes.

    initrd     the initramfs (guest_initrd(), tool_initrd())
    qemu_args  further QEMU arguments (cards, traffic sources)
    forwards   guest TCP ports to reach from the host: each gets a free
               port on 127.0.0.1 (ports, url()); with net=True (the
               default, implied by forwards) the guest has a virtio-net card
               on QEMU's user network, which net_files()' /net-up.sh brings
               up. restrict=True keeps the guest from reaching the host or
               anything beyond; the forwards work either way.
    control    a second serial port (the guest's /dev/ttyS1) on which
               send() writes lines for the guest to read, e.g. its cue to
               end ("read -t 60 cmd < /dev/ttyS1")
    timeout    seconds before guest-run.sh ends QEMU; the process group is
               killed 10 s later if it is still there

    Use it as a context manager, or call stop(): either ends the guest if
    it is still running.
    """

    def __init__(self, initrd, qemu_args=(), forwards=(), net=None,
                 restrict=True, control=True, timeout=120):
        self.tmp = tempfile.mkdtemp(prefix='guest-')
        self.ports = {g: free_port() for g in forwards}
        args = list(qemu_args)
        if net or (net is None and forwards):
            fwd = ''.join(',hostfwd=tcp:127.0.0.1:%d-:%d' % (h, g)
                          for g, h in self.ports.items())
            args += ['-netdev', 'user,id=n0%s%s'
                     % (',restrict=on' if restrict else '', fwd),
                     # no option ROM: the guest boots through PVH, not PXE
                     '-device', 'virtio-net-pci,netdev=n0,romfile=']
        self.control = None
        self._ctl = None
        if control:
            self.control = os.path.join(self.tmp, 'control')
            args += ['-chardev', 'socket,id=ctl,path=%s,server=on,wait=off'
                     % self.control, '-serial', 'chardev:ctl']
        self.lines, self.times = [], []
        self._cond = threading.Condition()
        self.t0 = time.monotonic()
        env = dict(os.environ, GUEST_TIMEOUT=str(timeout))
        self.proc = subprocess.Popen(
            [os.path.join(REPO, 'scripts/guest-run.sh'), initrd] + args,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors='replace', env=env,
            start_new_session=True)
        self._killer = threading.Timer(timeout + 10, self._kill)
        self._killer.daemon = True
        self._killer.start()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip('\r\n'))
                self.times.append(time.monotonic() - self.t0)
                self._cond.notify_all()
        self.proc.wait()
        with self._cond:
            self._cond.notify_all()

    def _kill(self):
        """SIGKILL to every process of the guest's session: guest-run.sh,
        tee, and QEMU under timeout(1), which puts itself and QEMU in a
        process group of their own."""
        for pid in session_pids(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    @property
    def console(self):
        with self._cond:
            return '\n'.join(self.lines)

    def running(self):
        return self.proc.poll() is None

    def wait_for(self, marker, timeout, start=0):
        """The match of the first console line from index start on (0: the
        first line; len(self.lines) taken before a command: only what
        follows it) that the regular expression marker matches (re.search),
        waiting up to timeout seconds for it; None if it does not come in
        time or the guest ends without it. self.seen is the seconds since
        the start at which the line came."""
        pat = re.compile(marker)
        end = time.monotonic() + timeout
        i = start
        with self._cond:
            while True:
                for i in range(i, len(self.lines)):
                    m = pat.search(self.lines[i])
                    if m:
                        self.seen = self.times[i]
                        return m
                i = len(self.lines)
                left = end - time.monotonic()
                if left <= 0 or (not self._reader.is_alive()):
                    return None
                self._cond.wait(min(left, 1))

    def url(self, port, path='/'):
        """http://127.0.0.1:<host port>path for the guest's TCP port."""
        return 'http://127.0.0.1:%d%s' % (self.ports[port], path)

    def send(self, line):
        """Write line and a newline to the guest's /dev/ttyS1."""
        if self._ctl is None:
            self._ctl = socket.socket(socket.AF_UNIX)
            self._ctl.settimeout(10)
            self._ctl.connect(self.control)
        self._ctl.sendall((line + '\n').encode())

    def wait(self, timeout):
        """The exit status of scripts/guest-run.sh (0: the guest's main
        ended with 0), waiting up to timeout seconds; None if still up."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._reader.join(5)
        return rc

    def stop(self, grace=0):
        """End the guest (after grace seconds for it to end by itself) and
        return the exit status of scripts/guest-run.sh."""
        if self.wait(grace) is None or session_pids(self.proc.pid):
            self._kill()
            self.proc.wait()
            self._reader.join(5)
            end = time.monotonic() + 5
            while session_pids(self.proc.pid) and time.monotonic() < end:
                time.sleep(0.05)
        self._killer.cancel()
        if self._ctl is not None:
            self._ctl.close()
            self._ctl = None
        shutil.rmtree(self.tmp, ignore_errors=True)
        return self.proc.returncode


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


class Qmp:
    """A QMP client on QEMU's Unix socket (-qmp unix:PATH,server=on,
    wait=off): command() returns the reply, events are kept for
    wait_event()."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.f = self.sock.makefile('rw')
        self.events = []
        self.f.readline()                           # greeting
        self.command('qmp_capabilities')

    def command(self, name, **args):
        self.f.write(json.dumps({'execute': name, 'arguments': args}) + '\n')
        self.f.flush()
        while True:
            line = self.f.readline()
            if not line:
                return None
            msg = json.loads(line)
            if 'event' in msg:
                self.events.append(msg)
            if 'return' in msg or 'error' in msg:
                return msg

    def wait_event(self, name, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if any(e['event'] == name for e in self.events):
                return True
            self.sock.settimeout(max(0.01, end - time.monotonic()))
            try:
                line = self.f.readline()
            except OSError:
                return False
            if not line:
                return False
            msg = json.loads(line)
            if 'event' in msg:
                self.events.append(msg)
        return any(e['event'] == name for e in self.events)
