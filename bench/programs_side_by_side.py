#!/usr/bin/env python3
"""Times programs on one graph side by side: in every round each program runs once, in a process of
its own timed from fork to exit, after a child that touches and frees more memory than any run's
peak (as graph-io-bench's SettleMemory: in this VM a run otherwise pays for the part of its peak
above its predecessor's). The output is removed before every run, untimed: replacing a file costs
its size in unlinking (about 80 ms for 404 MB on this host's ext4 with `discard`), which would bill
each run for the output of the one before it. The order is reversed every other round, the first
program (the baseline) staying first. Prints each program's median wall time, its ratio to the
baseline's, CPU (user + system) and peak resident memory, read from wait4.

Usage: bench/programs_side_by_side.py --graph IN --rounds 11 \\
         bare=build-release/bench/bare-round-trip {in} {out} \\
         copy=build-release/apps/rewrite-graph {in} -o {out} ...
Each NAME=COMMAND is split on spaces; {in} becomes the graph, {out} a file in the temp folder."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def settle(megabytes):
    """Touches and frees `megabytes` in a child process."""
    subprocess.run([sys.executable, '-c',
                    f'b = bytearray({megabytes} << 20)\n'
                    'for i in range(0, len(b), 4096): b[i] = 1'], check=True)


def run(argv):
    """Wall seconds, CPU seconds, system seconds and peak MB of one run of argv."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"error: '{' '.join(argv)}' exited with status {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_stime, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--graph', required=True, help='the input graph, {in} in the commands')
    parser.add_argument('--rounds', type=int, default=11)
    parser.add_argument('--settle-mb', type=int, default=2500,
                        help='memory each settling child touches (more than any run peaks at)')
    parser.add_argument('programs', nargs='+', metavar='NAME=COMMAND',
                        help='the first is the baseline the ratios are against')
    args = parser.parse_args()

    out = os.path.join(tempfile.mkdtemp(), 'out.onnx')
    programs = []
    for spec in args.programs:
        name, sep, command = spec.partition('=')
        if not sep or not command.split():
            parser.error(f"'{spec}' is not NAME=COMMAND")
        argv = [word.replace('{in}', args.graph).replace('{out}', out) for word in command.split()]
        programs.append((name, argv))

    samples = {name: [] for name, _ in programs}
    for round_index in range(args.rounds):
        order = programs if round_index % 2 == 0 else programs[:1] + programs[:0:-1]
        for name, argv in order:
            if os.path.exists(out):
                os.remove(out)
            settle(args.settle_mb)
            samples[name].append(run(argv))
        print(f'round {round_index + 1}/{args.rounds}: ' +
              ', '.join(f'{name} {samples[name][-1][0]:.3f} s' for name, _ in programs),
              file=sys.stderr, flush=True)
    if os.path.exists(out):
        os.remove(out)

    def median(name, field):
        return statistics.median(sample[field] for sample in samples[name])

    baseline = median(programs[0][0], 0)
    print(f'Medians of {args.rounds} rounds on {args.graph}:\n')
    print('| program | wall s | / ' + programs[0][0] + ' | runs s | CPU s (sys) | peak MB |')
    print('|---|---:|---:|---:|---:|---:|')
    for name, _ in programs:
        walls = [sample[0] for sample in samples[name]]
        print(f'| {name} | {median(name, 0):.3f} | **{median(name, 0) / baseline:.2f}x** | '
              f'{min(walls):.3f}-{max(walls):.3f} | {median(name, 1):.2f} ({median(name, 2):.2f}) | '
              f'{median(name, 3):.0f} |')


if __name__ == '__main__':
    main()
