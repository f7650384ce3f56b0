"""``session11/ab.py`` with the case lists of session 12 (calls A and B).

    PYTHONPATH=<tree> python3 ab12.py TAG OUT.json   # AB_B1=1: the B=1 cases; AB_B1024=1: B=1024 only

Run from the repository root.  With ``AB_B1`` it times top-p 0.9 and top-k 50 at B=1 on Zipf,
Gaussian and LLM-like rows; otherwise it runs ``session11/ab.py``'s own lists.  (On the device
these lists ran from a copy of ``session11/ab.py`` with the same lists.)
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "session11"))
import ab  # noqa: E402  (session11/ab.py)
import torch  # noqa: E402

_own_cases = ab.cases


def cases():
    if os.environ.get("AB_B1"):
        return [(d, torch.float32, 1, k, p) for d in ("zipf", "gauss", "llm") for k, p in ((None, 0.9), (50, None))]
    return _own_cases()


ab.cases = cases

if __name__ == "__main__":
    ab.main()
