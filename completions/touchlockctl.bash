# bash completion for touchlockctl, written from its command-line definitions (those of
# `touchlockctl --help`; see touchlockctl(1)) by Completions.bash. Do not edit:
# `TOUCHLOCK_UPDATE_GOLDEN=1 swift test --filter CompletionFilesTests` writes it anew.

# The words of $1 that begin with the word being completed.
_touchlockctl_words()
{
    COMPREPLY=($(compgen -W "$1" -- "$cur"))
    __ltrim_colon_completions "$cur"
}

_touchlockctl()
{
    local cur prev words cword split
    _init_completion -s -n : || return

    # The command: the first word that is not an option or an option's value.
    local i command=""
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --socket) ((i++)) ;;
            -*) ;;
            *) command=${words[i]}; break ;;
        esac
    done

    # The value of the option before the word being completed.
    case $command:$prev in
        :--socket | status:--socket | wait-unlock:--socket | subscribe:--socket | lock:--socket | metrics:--socket | enroll:--socket | message:--socket | lockout:--socket | service-key:--fleet-key-file | service-key:--machine-id-file | service-code:--fleet-key-file | service-code:--machine-id-file)
            _filedir
            return ;;
        wait-unlock:--timeout | enroll:--timeout | set-secret:--min-length | set-secret:-C | set-secret:--config | set-secret:--file | set-secret:--hash | set-secret:--hash-file | set-secret:--length | hash-pattern:--min-length | hash-pattern:-C | hash-pattern:--config | replay:--quirk | preview:--dpi | service-key:--device-id | service-code:--device-id | service-code:--at | service-code:--step)
            # anything: nothing to offer
            return ;;
        set-secret:--grid | hash-pattern:--grid)
            _touchlockctl_words "3x3 4x4 5x5"
            return ;;
        set-secret:--repeat | hash-pattern:--repeat)
            _touchlockctl_words "never allowed"
            return ;;
        replay:--desc)
            _filedir desc
            return ;;
        preview:--screen)
            _touchlockctl_words "pattern code service"
            return ;;
        preview:--state)
            _touchlockctl_words "idle drawing error too-short lockout unlocked enroll enroll-again enroll-mismatch digits:2 secure:2 reveal:2 pressed full incomplete blurred"
            return ;;
        preview:--size)
            _touchlockctl_words "1280x800 800x1280 480x800"
            return ;;
        preview:--out)
            _filedir png
            return ;;
        preview:-C | preview:--config)
            _filedir conf
            return ;;
        preview:--rotation)
            _touchlockctl_words "0 90 180 270"
            return ;;
        service-code:--key-file)
            _filedir key
            return ;;
        service-code:--digits)
            _touchlockctl_words "6 7 8"
            return ;;
        service-code:--algorithm)
            _touchlockctl_words "sha1 sha256 sha512"
            return ;;
    esac
    # A value given after '=' to an option that takes none: nothing to offer.
    $split && return

    case $command in
        "")
            if [[ $cur == -* ]]; then
                _touchlockctl_words "--socket --help --version"
            else
                _touchlockctl_words "status wait-unlock subscribe lock metrics enroll message lockout set-secret hash-pattern hash-code replay preview service-key service-code"
            fi ;;
        status)
            _touchlockctl_words "--socket --json --help" ;;
        wait-unlock)
            _touchlockctl_words "--socket --timeout --help" ;;
        subscribe)
            _touchlockctl_words "--socket --help" ;;
        lock)
            _touchlockctl_words "--socket --help" ;;
        metrics)
            _touchlockctl_words "--socket --openmetrics --help" ;;
        enroll)
            if [[ $cur == -* ]]; then
                _touchlockctl_words "--socket --duress --remove --status --screen --timeout --help"
            else
                _touchlockctl_words "pattern code"
            fi ;;
        message)
            if [[ $cur == -* ]]; then
                _touchlockctl_words "--socket --clear --help"
            else
                _touchlockctl_words "--socket --clear --help"
            fi ;;
        lockout)
            _touchlockctl_words "--socket --reset --help" ;;
        set-secret)
            if [[ $cur == -* ]]; then
                _touchlockctl_words "--grid --min-length --repeat --config --file --hash --hash-file --length --help"
            else
                _touchlockctl_words "pattern code"
            fi ;;
        hash-pattern)
            _touchlockctl_words "--grid --min-length --repeat --config --help" ;;
        hash-code)
            _touchlockctl_words "--help" ;;
        replay)
            if [[ $cur == -* ]]; then
                _touchlockctl_words "--desc --quirk --json --help"
            else
                _filedir '@(evemu|events)'
            fi ;;
        preview)
            _touchlockctl_words "--screen --state --size --out --config --dpi --rotation --help" ;;
        service-key)
            _touchlockctl_words "--fleet-key-file --device-id --machine-id-file --help" ;;
        service-code)
            _touchlockctl_words "--fleet-key-file --device-id --machine-id-file --key-file --at --uri --digits --step --algorithm --help" ;;
    esac
} &&
    complete -F _touchlockctl touchlockctl
