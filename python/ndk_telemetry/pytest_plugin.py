# SPDX-License-Identifier: GPL-2.0-or-later
"""pytest fixtures for ndk-pcie-telemetry cards.

Use with `python3 -m pytest -p ndk_telemetry.pytest_plugin`, or register
it from a conftest.py:

    pytest_plugins = ['ndk_telemetry.pytest_plugin']

Fixtures (QEMU from QTEST_QEMU_BINARY; a test skips, saying why, when it
is unset or names no executable; every QEMU a test started is shut down
when it ends):

  ndk_card(props=None, traffic=None, machine='q35', extra_args=(), **kw)
      a started Card alone in its own QEMU; traffic is a Traffic,
      ('pattern', {...}), 'pattern,rq-frame-bytes=256' or None
  ndk_machine(cards, machine='q35', extra_args=(), **kw)
      a started Machine with several cards
"""
import pytest

from .errors import QemuNotFound
from .machine import ENV_QEMU, Card, Machine, resolve_qemu


def _qemu_or_skip():
    try:
        return resolve_qemu()
    except QemuNotFound as e:
        pytest.skip('ndk_telemetry: %s' % e)


def pytest_report_header(config):
    try:
        return 'ndk_telemetry: QEMU %s' % ' '.join(resolve_qemu())
    except QemuNotFound:
        return 'ndk_telemetry: no QEMU (%s unset or not executable): the ' \
               'card tests skip' % ENV_QEMU


@pytest.fixture
def ndk_machine():
    """A factory of started Machines; all are shut down at teardown."""
    started = []

    def make(cards=(), machine='q35', extra_args=(), **kw):
        qemu = _qemu_or_skip()
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
