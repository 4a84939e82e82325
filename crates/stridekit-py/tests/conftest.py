import os
import sys

FIXTURE = os.path.join(
    os.path.dirname(__file__), "..", "..", "stridekit-layout", "tests", "fixtures", "layout_cases.jsonl"
)
