# fish completion for touchlockctl, written from its command-line definitions (those of
# `touchlockctl --help`; see touchlockctl(1)) by Completions.fish. Do not edit:
# `TOUCHLOCK_UPDATE_GOLDEN=1 swift test --filter CompletionFilesTests` writes it anew.

set -l commands status wait-unlock subscribe lock metrics enroll message lockout set-secret hash-pattern hash-code replay preview service-key service-code
# No file names unless a value or an argument is a file.
complete -c touchlockctl -f

complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -s h -l help -d 'show this help and exit'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -s V -l version -d 'print the version and exit'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a status -d 'print the daemon\'s state, methods, attempts, secrets and screens'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a wait-unlock -d 'wait until unlocked and the screen handed back (at once if it is); print the unlocked event line'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a subscribe -d 'print every event line until the daemon goes away'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a lock -d 'lock the device again (after an unlock)'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a metrics -d 'print the daemon\'s latency figures as one JSON line'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a enroll -d 'enroll or remove a secret (root), or say which are enrolled'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a message -d 'set the message the lock screen shows, or remove it (--clear)'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a lockout -d 'root: clear the failure count and the wait (logged)'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a set-secret -d 'root: hash a secret read on standard input into the root-only secrets file'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a hash-pattern -d 'print the salted hash of a pattern read on standard input'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a hash-code -d 'print the salted hash of a code read on standard input'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a replay -d 'decode an evemu recording through the touch assembler (no daemon)'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a preview -d 'draw a lock screen in a state as a PNG, without hardware'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a service-key -d 'print a device\'s service key, derived from the fleet key'
complete -c touchlockctl -n "not __fish_seen_subcommand_from $commands" -a service-code -d 'print a device\'s one-time service code, or its otpauth URI'

complete -c touchlockctl -n "__fish_seen_subcommand_from status" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from status" -l json -d 'print the protocol\'s status reply, one JSON line'
complete -c touchlockctl -n "__fish_seen_subcommand_from status" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from wait-unlock" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from wait-unlock" -l timeout -x -d 'give up after SEC seconds (exit 1)'
complete -c touchlockctl -n "__fish_seen_subcommand_from wait-unlock" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from subscribe" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from subscribe" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from lock" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from lock" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from metrics" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from metrics" -l openmetrics -d 'print the status and the figures as OpenMetrics text'
complete -c touchlockctl -n "__fish_seen_subcommand_from metrics" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -l duress -d 'the duress code (unlocks, and tells subscribers)'
complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -l remove -d 'remove the secret'
complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -l status -d 'say which secrets are enrolled'
complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -l screen -d 'draw (type) the secret on the daemon\'s screen; print the enrolled or enroll_failed event'
complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -l timeout -x -d 'with --screen: give up after SEC seconds'
complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -s h -l help -d 'show this help and exit'
complete -c touchlockctl -n "__fish_seen_subcommand_from enroll" -f -a 'pattern code' -d 'which secret: pattern or code'

complete -c touchlockctl -n "__fish_seen_subcommand_from message" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from message" -l clear -d 'remove the message set before'
complete -c touchlockctl -n "__fish_seen_subcommand_from message" -s h -l help -d 'show this help and exit'
complete -c touchlockctl -n "__fish_seen_subcommand_from message"  -d 'the message (quoted as one argument)'

complete -c touchlockctl -n "__fish_seen_subcommand_from lockout" -l socket -r -F -d 'the control socket (default: $TOUCHLOCK_SOCKET, else /run/touchlock/touchlock.sock)'
complete -c touchlockctl -n "__fish_seen_subcommand_from lockout" -l reset -d 'clear the count and the wait (required)'
complete -c touchlockctl -n "__fish_seen_subcommand_from lockout" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -l grid -x -a '3x3 4x4 5x5' -d 'the grid\'s rows and columns, 2 to 9 each (default: the config\'s, else 3x3)'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -l min-length -x -d 'the fewest nodes a pattern connects (default: the config\'s min_length, else 4)'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -l repeat -x -a 'never allowed' -d 'never or allowed: whether a node can be chosen again (default: the config\'s repeat, else never)'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -s C -l config -x -d 'read settings from FILE too, after the daemon\'s (may be given several times)'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -l file -x -d 'the secrets file (default /etc/touchlock/secrets.conf)'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -l hash -x -d 'a yescrypt hash made elsewhere; - reads it on standard input'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -l hash-file -x -d 'read the hash from HASHFILE (one line)'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -l length -x -d 'with a code\'s hash: its number of digits, 4 to 12'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -s h -l help -d 'show this help and exit'
complete -c touchlockctl -n "__fish_seen_subcommand_from set-secret" -f -a 'pattern code' -d 'which secret: pattern or code'

complete -c touchlockctl -n "__fish_seen_subcommand_from hash-pattern" -l grid -x -a '3x3 4x4 5x5' -d 'the grid\'s rows and columns, 2 to 9 each (default: the config\'s, else 3x3)'
complete -c touchlockctl -n "__fish_seen_subcommand_from hash-pattern" -l min-length -x -d 'the fewest nodes a pattern connects (default: the config\'s min_length, else 4)'
complete -c touchlockctl -n "__fish_seen_subcommand_from hash-pattern" -l repeat -x -a 'never allowed' -d 'never or allowed: whether a node can be chosen again (default: the config\'s repeat, else never)'
complete -c touchlockctl -n "__fish_seen_subcommand_from hash-pattern" -s C -l config -x -d 'read settings from FILE too, after the daemon\'s (may be given several times)'
complete -c touchlockctl -n "__fish_seen_subcommand_from hash-pattern" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from hash-code" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from replay" -l desc -r -F -d 'the device\'s description, from another recording'
complete -c touchlockctl -n "__fish_seen_subcommand_from replay" -l quirk -x -d 'an input quirk (may be given several times)'
complete -c touchlockctl -n "__fish_seen_subcommand_from replay" -l json -d 'print JSON (the only output; required)'
complete -c touchlockctl -n "__fish_seen_subcommand_from replay" -s h -l help -d 'show this help and exit'
complete -c touchlockctl -n "__fish_seen_subcommand_from replay" -F -d 'an evemu recording'

complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -l screen -x -a 'pattern code service' -d 'pattern (default), code or service (the service pad over the configured screen)'
complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -l state -x -a 'idle drawing error too-short lockout unlocked enroll enroll-again enroll-mismatch digits:2 secure:2 reveal:2 pressed full incomplete blurred' -d 'the state to draw (default idle)'
complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -l size -x -a '1280x800 800x1280 480x800' -d 'the screen\'s size (default 1280x800)'
complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -l out -r -F -d 'where to write the picture (required)'
complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -s C -l config -r -F -d 'read settings from FILE (may be given several times)'
complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -l dpi -x -d 'dots per inch of the panel, 30 to 1000'
complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -l rotation -x -a '0 90 180 270' -d 'the picture turned on the panel, clockwise: 0, 90, 180 or 270 (default: [display] rotation)'
complete -c touchlockctl -n "__fish_seen_subcommand_from preview" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from service-key" -l fleet-key-file -r -F -d 'the fleet key: one line of 64 lowercase hex digits'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-key" -l device-id -x -d 'the device\'s id (its /etc/machine-id)'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-key" -l machine-id-file -r -F -d 'read the device\'s id from FILE (default /etc/machine-id)'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-key" -s h -l help -d 'show this help and exit'

complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l fleet-key-file -r -F -d 'the fleet key: one line of 64 lowercase hex digits'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l device-id -x -d 'the device\'s id (its /etc/machine-id)'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l machine-id-file -r -F -d 'read the device\'s id from FILE (default /etc/machine-id)'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l key-file -r -F -d 'the device key file (default /etc/touchlock/service.key)'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l at -x -d 'the time of the code, in seconds since 1970 (default now)'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l uri -d 'print the otpauth:// URI of the device\'s codes'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l digits -x -a '6 7 8' -d 'digits of a code, 6 to 8 (default 6): as the device\'s [service] digits'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l step -x -d 'seconds of a step, 10 to 300 (default 30): as [service] step_s'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -l algorithm -x -a 'sha1 sha256 sha512' -d 'sha1 (default), sha256 or sha512: as [service] algorithm'
complete -c touchlockctl -n "__fish_seen_subcommand_from service-code" -s h -l help -d 'show this help and exit'
