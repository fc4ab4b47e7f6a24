# Serves a directory of textfiles with a real node_exporter (its textfile collector only,
# on 127.0.0.1), scrapes it once, checks the scrape with promtool and the touchlock
# samples named NAME[{label=value}]=VALUE in the arguments.
#   node_exporter_check.py DIR NAME=VALUE...
import socket
import subprocess
import sys
import time
import urllib.request

directory, wanted = sys.argv[1], sys.argv[2:]
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
exporter = subprocess.Popen(["prometheus-node-exporter", "--collector.disable-defaults", "--collector.textfile",
                             f"--collector.textfile.directory={directory}", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
try:
    text = None
    for _ in range(100):
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            break
        except OSError:
            time.sleep(0.1)
    assert text is not None, "node_exporter did not answer"
finally:
    exporter.terminate()
    exporter.wait()
lines = text.splitlines()


def ours(line):
    """touchlock's samples and their HELP and TYPE lines (not node_exporter's own)."""
    words = line.split()
    name = words[2] if line.startswith("#") and len(words) > 2 else (words[0] if words else "")
    return name.startswith("touchlock_")



errors = [l for l in lines if l.startswith("node_textfile_scrape_error")]
assert errors == ["node_textfile_scrape_error 0"], errors
check = subprocess.run(["promtool", "check", "metrics"], input="\n".join(l for l in lines if ours(l)) + "\n",
                       capture_output=True, text=True)
assert check.returncode == 0, "promtool: " + check.stdout + check.stderr
for w in wanted:
    name, value = w.rsplit("=", 1)
    sample = name.replace("{", '{').replace("=", '="').replace("}", '"}') if "{" in name else name
    hits = [l for l in lines if l.split(" ")[0] == sample]
    assert hits and float(hits[0].split(" ")[1]) == float(value), (w, hits)
print("ok:", len([l for l in lines if l.startswith("touchlock_")]), "touchlock samples scraped; promtool:",
      (check.stdout + check.stderr).strip() or "no problems")
