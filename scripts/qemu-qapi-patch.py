#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Add the traffic object types of qemu-device/qapi/*.json to
QEMU's qapi/qom.json: the struct definitions as a marked block at the end,
one line per type in the ObjectType enum and in the ObjectOptions union.
Rewrites the file only when its content changes, so a rerun rebuilds
nothing, and then as a new file renamed over the old one: the old one may
be a hard link shared with other QEMU trees (scripts/setup.sh)."""
import os
import re
import shutil
import sys

MARK = '# ndk-pcie-telemetry'


def main(qom_path, *fragment_paths):
    frag = ''
    for path in sorted(fragment_paths):
        text = open(path).read()
        # the file's own header comment stays out; definitions start at ##
        frag += text[text.index('##\n'):] + '\n'
    frag = frag.strip('\n') + '\n'
    models = re.findall(r"'struct': 'TelemetryTraffic(\w+)Properties'", frag)
    old = open(qom_path).read()
    # drop what an earlier run added
    text = re.sub(r'\n# BEGIN ndk-pcie-telemetry.*# END ndk-pcie-telemetry\n',
                  '\n', old, flags=re.S)
    lines = [l for l in text.splitlines(True) if MARK not in l]
    out = []
    state = None
    for line in lines:
        out.append(line)
        if line.startswith("{ 'enum': 'ObjectType'"):
            state = 'enum'
        elif line.startswith("{ 'union': 'ObjectOptions'"):
            state = 'union'
        elif state == 'enum' and line.strip() == "'data': [":
            for m in models:
                out.append("    'telemetry-traffic-%s', %s\n" %
                           (m.lower(), MARK))
            state = None
        elif state == 'union' and line.strip() == "'data': {":
            for m in models:
                out.append("      'telemetry-traffic-%s': "
                           "'TelemetryTraffic%sProperties', %s\n" %
                           (m.lower(), m, MARK))
            state = None
    new = ''.join(out).rstrip('\n') + '\n'
    new += ('\n# BEGIN ndk-pcie-telemetry (added by qemu-integrate.sh)\n' +
            frag.strip('\n') + '\n# END ndk-pcie-telemetry\n')
    if new.count(MARK) != 2 * len(models):
        sys.exit('qemu-qapi-patch: ObjectType or ObjectOptions not found in '
                 + qom_path)
    if new != old:
        tmp = qom_path + '.ndk-new'
        with open(tmp, 'w') as f:
            f.write(new)
        shutil.copymode(qom_path, tmp)
        os.replace(tmp, qom_path)


if __name__ == '__main__':
    main(sys.argv[1], *sys.argv[2:])
