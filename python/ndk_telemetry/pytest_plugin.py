# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest fixtures for ndk-pcie-telemetry cards.

Use with `/usr/bin/python3 -m pytest -p ndk_telemetry.pytest_plugin`, or register
it from a conftest.py:

    pytest_plugins = ['ndk_telemetry.pytest_plugin']

Fixtures (QEMU from QTEST_QEMU_BINARY; a test skips, saying why, when it
is unset or names no executable, and fails instead in strict mode:
--ndk-strict or NDK_TELEMETRY_STRICT=1; every QEMU a test started is shut
down when it ends):

  ndk_card(props=None, traffic=None, machine='q35', extra_args=(), **kw)
      a started Card alone in its own QEMU; traffic is a Traffic,
      ('pattern', {...}), 'pattern,rq-frame-bytes=256' or None
  ndk_machine(cards, machine='q35', extra_args=(), **kw)
      a started Machine with several cards
"""
import os

import pytest

from .errors import QemuNotFound
from .machine import ENV_QEMU, Card, Machine, resolve_qemu

ENV_STRICT = 'NDK_TELEMETRY_STRICT'
OPTION_STRICT = '--ndk-strict'


def pytest_addoption(parser):
    parser.getgroup('ndk_telemetry').addoption(
        OPTION_STRICT, action='store_true', default=False,
        help='a test whose card cannot start (no QEMU) fails with the '
             'reason instead of being skipped (also %s=1)' % ENV_STRICT)


def strict(config):
    """True when --ndk-strict is given or NDK_TELEMETRY_STRICT is set to
    anything but '', 0, no, false or off."""
    if config.getoption('ndk_strict', default=False):
        return True
    value = os.environ.get(ENV_STRICT, '').strip().lower()
    return value not in ('', '0', 'no', 'false', 'off')


def _qemu_or_skip(config):
    __tracebackhide__ = True
    try:
        return resolve_qemu()
    except QemuNotFound as e:
        why = 'ndk_telemetry: %s' % e
    if strict(config):
        pytest.fail(why + ' (strict: %s or %s=1)' % (OPTION_STRICT,
                                                     ENV_STRICT))
    pytest.skip(why)


def pytest_report_header(config):
    try:
        return 'ndk_telemetry: QEMU %s%s' % (
            ' '.join(resolve_qemu()), ' (strict)' if strict(config) else '')
    except QemuNotFound:
        return 'ndk_telemetry: no QEMU (%s unset or not executable): the ' \
               'card tests %s' % (ENV_QEMU, 'fail (strict)' if strict(config)
                                  else 'skip')


@pytest.fixture
def ndk_machine(request):
    """A factory of started Machines; all are shut down at teardown."""
    started = []

    def make(cards=(), machine='q35', extra_args=(), **kw):
        qemu = _qemu_or_skip(request.config)
        m = Machine(cards, qemu=qemu, machine=machine, extra_args=extra_args,
                    **kw)
        started.append(m)
        return m

    yield make
    for m in started:
        m.close()


@pytest.fixture
def ndk_card(ndk_machine):
    """A factory: ndk_card(props=None, traffic=None, ...) -> a started
    Card in a QEMU of its own (card.machine)."""

    def make(props=None, traffic=None, machine='q35', extra_args=(), **kw):
        return ndk_machine([Card(props, traffic)], machine=machine,
                           extra_args=extra_args, **kw).cards[0]

    return make
