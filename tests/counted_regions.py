"""A stand-in for the reference program's code generator that counts how often each region's code runs."""


def counting(generate):
    """(stand-in for targets/reference/program.py's _inductor, [[region, calls] per region generated]): the stand-in
    makes each region's code with generate(region, examples, patches) and counts the calls of that code."""
    generated = []

    def stand_in(region, examples, patches):
        code, entry = generate(region, examples, patches), [region, 0]
        generated.append(entry)

        def run(*arguments):
            entry[1] += 1
            return code(*arguments)
        return run

    return stand_in, generated
