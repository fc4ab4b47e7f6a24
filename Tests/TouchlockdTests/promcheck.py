# Reads a Prometheus textfile with prometheus_client and checks NAME[{label=value}]=VALUE arguments.
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
for name in sys.argv[2:]:
    n, want = name.rsplit("=", 1)
    label = None
    if "{" in n: n, label = n[:-1].split("{")
    f = fams[n]
    vals = [s.value for s in f.samples if (label is None or label in [f"{k}={v}" for k, v in s.labels.items()]) and not s.name.endswith("_created")]
    assert vals and float(vals[0]) == float(want), (name, vals)
print("ok", len(fams), "families")
