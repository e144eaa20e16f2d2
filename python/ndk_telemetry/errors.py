# SPDX-License-Identifier: GPL-2.0-or-later
"""The exceptions of ndk_telemetry: all derive from NdkError."""


class NdkError(Exception):
    """Anything ndk_telemetry refuses or finds wrong."""


class QemuNotFound(NdkError):
    """No QEMU binary: neither given nor named by QTEST_QEMU_BINARY."""


class QemuStartError(NdkError):
    """QEMU exited or did not connect while starting (e.g. a bad property);
    the message holds its exit status and the end of its stderr."""

    def __init__(self, message, returncode=None, stderr_tail=''):
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class QemuDied(NdkError):
    """QEMU exited while a command waited for its answer."""

    def __init__(self, message, returncode=None, stderr_tail='', command=None):
        super().__init__(message)
        self.returncode = returncode
        self.stderr_tail = stderr_tail
        self.command = command


class QemuTimeout(NdkError):
    """QEMU is alive but did not answer within the timeout."""

    def __init__(self, message, command=None):
        super().__init__(message)
        self.command = command


class QTestError(NdkError):
    """The qtest protocol answered FAIL."""


class QmpError(NdkError):
    """A QMP command answered with an error."""

    def __init__(self, command, error):
        self.command = command
        self.error_class = error.get('class', '')
        self.desc = error.get('desc', '')
        super().__init__('QMP %s: %s (%s)' % (command, self.desc,
                                               self.error_class))


class RegmapNotFound(NdkError):
    """The JSON register map is in none of the places searched."""


class CardError(NdkError):
    """A card is missing, not started, or not what the register map says."""


class BusyTimeout(NdkError):
    """STATUS.busy did not fall within the bound the timing allows."""
