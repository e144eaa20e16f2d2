# SPDX-License-Identifier: GPL-2.0-or-later
"""QEMU as a process, and its qtest and QMP protocols over Unix sockets.

Every wait for an answer also watches the process, so a QEMU that exits
(or is killed) while a command waits gives QemuDied with its exit status
and the end of its stderr, never a hang or a bare socket error.
"""
import json
import os
import select
import signal
import socket
import subprocess
import time

from .errors import QemuDied, QemuTimeout, QmpError, QTestError

# how often a wait looks at the process between reads
POLL_S = 0.2


def describe_status(returncode):
    """An exit status in words: 'exit status 1', 'killed by signal 9
    (SIGKILL)'."""
    if returncode is None:
        return 'still running'
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = 'unknown'
        return 'killed by signal %d (%s)' % (-returncode, name)
    return 'exit status %d' % returncode


class QemuProcess:
    """A QEMU process whose stdout and stderr go to a log file."""

    def __init__(self, argv, log_path, env=None):
        self.argv = list(argv)
        self.log_path = log_path
        self._log = open(log_path, 'wb')
        try:
            self.popen = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=self._log,
                stderr=subprocess.STDOUT, env=env)
        finally:
            self._log.close()

    @property
    def pid(self):
        return self.popen.pid

    @property
    def returncode(self):
        return self.popen.poll()

    def alive(self):
        return self.popen.poll() is None

    def wait(self, timeout=None):
        """The exit status, or None if QEMU still runs after timeout s."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.alive():
            self.popen.kill()
        self.popen.wait()

    def stderr_text(self):
        try:
            with open(self.log_path, 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except OSError:
            return ''

    def stderr_tail(self, lines=20):
        return '\n'.join(self.stderr_text().splitlines()[-lines:])

    def died(self, command):
        """Raise QemuDied for a QEMU that closed its end while `command`
        waited (given a moment to finish exiting)."""
        rc = self.wait(5)
        tail = self.stderr_tail()
        what = 'QEMU (pid %d) %s' % (self.pid, 'exited with ' +
                                     describe_status(rc) if rc is not None
                                     else 'closed its socket but still runs')
        if command:
            what += ' while waiting for the answer to %r' % command
        what += '; the end of its stderr:\n' + (tail or '(empty)')
        raise QemuDied(what, returncode=rc, stderr_tail=tail,
                       command=command)


class LineChannel:
    """Lines over a connected stream socket, with waits that watch the
    QEMU process at the other end."""

    def __init__(self, sock, process):
        self.sock = sock
        self.process = process
        self.buf = b''
        self.sock.setblocking(False)

    def send(self, data, command, timeout):
        end = None if timeout is None else time.monotonic() + timeout
        view = memoryview(data)
        while view:
            try:
                n = self.sock.send(view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except OSError:
                self.process.died(command)
            wait = POLL_S if end is None else min(POLL_S,
                                                  end - time.monotonic())
            if wait <= 0:
                raise QemuTimeout('QEMU took no input for %s s at %r' %
                                  (timeout, command), command=command)
            _, w, _ = select.select([], [self.sock], [], wait)
            if not w and not self.process.alive():
                self.process.died(command)

    def readline(self, command, timeout):
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            i = self.buf.find(b'\n')
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 1:]
                return line
            wait = POLL_S if end is None else min(POLL_S,
                                                  end - time.monotonic())
            if wait <= 0:
                raise QemuTimeout('QEMU did not answer %r within %s s' %
                                  (command, timeout), command=command)
            r, _, _ = select.select([self.sock], [], [], wait)
            if r:
                try:
                    data = self.sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b''
                if not data:
                    self.process.died(command)
                self.buf += data
            elif not self.process.alive():
                self.process.died(command)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class QTest:
    """The qtest protocol: one command a line, answered by a line that
    starts with OK or FAIL (other lines, such as IRQ notices, are
    skipped). send() and reply() pipeline: several commands in one write,
    their answers read later in order."""

    def __init__(self, channel, timeout):
        self.ch = channel
        self.timeout = timeout
        self.pending = []
        self.now = None

    def send(self, lines):
        """Send commands without reading their answers."""
        if isinstance(lines, str):
            lines = [lines]
        if not lines:
            return
        self.ch.send(''.join(l + '\n' for l in lines).encode(), lines[0],
                     self.timeout)
        self.pending += lines

    def _answer(self, timeout):
        """(command, OK?, words after OK/FAIL) of the next answer."""
        cmd = self.pending.pop(0) if self.pending else None
        t = self.timeout if timeout is False else timeout
        while True:
            words = self.ch.readline(cmd, t).decode('ascii',
                                                    'replace').split()
            if words and words[0] in ('OK', 'FAIL'):
                return cmd, words[0] == 'OK', words[1:]

    def reply(self, timeout=False):
        """The words of the next answer after OK; QTestError on FAIL."""
        cmd, ok, words = self._answer(timeout)
        if not ok:
            raise QTestError('qtest %r: FAIL %s' % (cmd, ' '.join(words)))
        return words

    def command(self, line, timeout=False):
        if self.pending:
            raise QTestError('qtest: %d answers still unread before %r' %
                             (len(self.pending), line))
        self.send(line)
        return self.reply(timeout)

    def batch(self, lines, timeout=False):
        """Several commands in one write; the list of their answers."""
        self.send(lines)
        return [self.reply(timeout) for _ in lines]

    # virtual time
    def clock_step(self, ns, timeout=False):
        ns = int(ns)
        if ns <= 0:
            if ns < 0:
                raise ValueError('clock_step: %d ns, the clock only goes '
                                 'forward' % ns)
            return self.clock_now()
        self.now = int(self.command('clock_step %d' % ns, timeout)[0])
        return self.now

    def clock_set(self, ns, timeout=False):
        ns = int(ns)
        now = self.clock_now()
        if ns < now:
            raise ValueError('clock_set: %d ns is before now (%d ns); the '
                             'clock only goes forward' % (ns, now))
        if ns == now:
            return now
        self.now = int(self.command('clock_set %d' % ns, timeout)[0])
        return self.now

    def clock_now(self):
        """The virtual clock: known from the last step, else asked with
        clock_set 0, whose FAIL answer (the clock is past 0) still names
        the time."""
        if self.now is None:
            self.send('clock_set 0')
            self.now = int(self._answer(False)[2][0])
        return self.now

    # memory and port I/O
    def read(self, addr, size):
        op = {1: 'readb', 2: 'readw', 4: 'readl', 8: 'readq'}[size]
        return int(self.command('%s 0x%x' % (op, addr))[0], 16)

    def write(self, addr, size, value):
        op = {1: 'writeb', 2: 'writew', 4: 'writel', 8: 'writeq'}[size]
        self.command('%s 0x%x 0x%x' % (op, addr, value))

    def inp(self, port, size):
        op = {1: 'inb', 2: 'inw', 4: 'inl'}[size]
        return int(self.command('%s 0x%x' % (op, port))[0], 16)

    def outp(self, port, size, value):
        op = {1: 'outb', 2: 'outw', 4: 'outl'}[size]
        self.command('%s 0x%x 0x%x' % (op, port, value))

    def readl(self, addr):
        return self.read(addr, 4)

    def readq(self, addr):
        return self.read(addr, 8)

    def writel(self, addr, value):
        self.write(addr, 4, value)

    def writeq(self, addr, value):
        self.write(addr, 8, value)


class Qmp:
    """QMP: JSON commands, answered by a return or an error; events that
    arrive meanwhile are kept in `events`."""

    def __init__(self, channel, timeout):
        self.ch = channel
        self.timeout = timeout
        self.events = []
        greeting = self._read('(greeting)', timeout)
        if 'QMP' not in greeting:
            raise QmpError('(greeting)', {'desc': 'not a QMP greeting: %r'
                                          % greeting})
        self.command('qmp_capabilities')

    def _read(self, what, timeout):
        while True:
            line = self.ch.readline(what, timeout).strip()
            if line:
                return json.loads(line)

    def command(self, name, timeout=False, **args):
        """The command's return value; QmpError if it answers an error."""
        msg = {'execute': name}
        if args:
            msg['arguments'] = args
        t = self.timeout if timeout is False else timeout
        self.ch.send((json.dumps(msg) + '\n').encode(), 'QMP ' + name, t)
        while True:
            rsp = self._read('QMP ' + name, t)
            if 'event' in rsp:
                self.events.append(rsp)
                continue
            if 'error' in rsp:
                raise QmpError(name, rsp['error'])
            if 'return' in rsp:
                return rsp['return']


def listen_unix(path):
    """A listening Unix socket at path (QEMU connects to it)."""
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    return s


def accept(listener, process, timeout, what):
    """The connection QEMU makes to listener, or None when QEMU exited or
    did not connect within timeout s (the caller reports which)."""
    end = time.monotonic() + timeout
    while True:
        r, _, _ = select.select([listener], [], [], POLL_S)
        if r:
            conn, _ = listener.accept()
            return conn
        if not process.alive():
            return None
        if time.monotonic() > end:
            return None
