"""Who produces and who reads each tensor of a program's steps: what the builder's fusions match on."""

import collections


def producers_and_readers(steps, output_names):
    """({tensor name: the step producing it}, {tensor name: how many steps read it, engine outputs counted}) for
    `steps`, (layer, record, weights) tuples in order."""
    producers = {name: step for step in steps for name in step[1]["outputs"]}
    readers = collections.Counter(name for step in steps for name in step[1]["inputs"])
    readers.update(output_names)
    return producers, readers
