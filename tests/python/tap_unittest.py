# SPDX-License-Identifier: GPL-2.0-or-later
"""Run unittest test cases and print TAP, one line per test, so that
meson and scripts/run-tests.sh count each test (a skip is `# SKIP`)."""
import sys
import time
import traceback
import unittest


class TapResult(unittest.TestResult):
    def __init__(self, out):
        super().__init__()
        self.out = out
        self.n = 0
        self.failed = 0

    def _line(self, ok, test, extra=''):
        self.n += 1
        self.out.write('%s %d - %s%s\n' % ('ok' if ok else 'not ok', self.n,
                                           test.id(), extra))
        self.out.flush()

    def _diag(self, err):
        text = ''.join(traceback.format_exception(*err))
        for line in text.rstrip().splitlines():
            self.out.write('# %s\n' % line)

    def startTest(self, test):
        super().startTest(test)
        self._start = time.monotonic()

    def addSuccess(self, test):
        self._line(True, test, ' (%.2f s)' % (time.monotonic() - self._start))

    def addFailure(self, test, err):
        self.failed += 1
        self._diag(err)
        self._line(False, test)

    addError = addFailure

    def addSkip(self, test, reason):
        self._line(True, test, ' # SKIP %s' % reason)

    def addExpectedFailure(self, test, err):
        self._line(True, test, ' # TODO expected failure')

    def addUnexpectedSuccess(self, test):
        self.failed += 1
        self._line(False, test, ' (unexpected success)')


def main(module):
    """Every test of `module` (a module object) as TAP; exit status 1
    when any failed."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    if len(sys.argv) > 1 and sys.argv[1] not in ('--tap',):
        names = [a for a in sys.argv[1:] if a != '--tap']
        suite = unittest.defaultTestLoader.loadTestsFromNames(names, module)
    count = suite.countTestCases()
    sys.stdout.write('1..%d\n' % count)
    result = TapResult(sys.stdout)
    start = time.monotonic()
    suite.run(result)
    sys.stdout.write('# %d tests in %.1f s, %d failed\n' % (
        result.n, time.monotonic() - start, result.failed))
    # a setUpModule/setUpClass error runs no test of its class
    if result.n < count:
        for _, text in result.errors[result.failed:]:
            for line in text.splitlines():
                sys.stdout.write('# %s\n' % line)
        sys.stdout.write('Bail out! %d of %d tests did not run\n' %
                         (count - result.n, count))
        return 1
    return 1 if result.failed else 0
