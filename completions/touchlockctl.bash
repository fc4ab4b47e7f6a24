# bash completion for touchlockctl                              -*- shell-script -*-
# The commands and options of `touchlockctl --help` (man touchlockctl).

_touchlockctl()
{
    local cur prev words cword
    _init_completion || return

    local commands="status wait-unlock subscribe lock metrics enroll hash-pattern hash-code replay preview"

    case $prev in
        --socket)
            _filedir
            return ;;
        --timeout|--grid|--dpi|--size|--state)
            # A value the user types: seconds, RxC, dots per inch, WxH, a state.
            case $prev in
                --grid) COMPREPLY=($(compgen -W "3x3 4x4 5x5" -- "$cur")) ;;
                --size) COMPREPLY=($(compgen -W "1280x800 800x1280 480x800" -- "$cur")) ;;
            esac
            return ;;
        --screen)
            COMPREPLY=($(compgen -W "pattern code" -- "$cur"))
            return ;;
        --remove)
            COMPREPLY=($(compgen -W "pattern code" -- "$cur"))
            return ;;
        --desc)
            _filedir desc
            return ;;
        --out)
            _filedir png
            return ;;
        -C|--config)
            _filedir conf
            return ;;
        --quirk)
            return ;;
    esac

    # The command: the first word that is not an option or an option's value.
    local i command=""
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --socket) ((i++)) ;;
            -*) ;;
            *) command=${words[i]}; break ;;
        esac
    done

    case $command in
        "")
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--socket --help --version" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            fi ;;
        wait-unlock)
            COMPREPLY=($(compgen -W "--timeout" -- "$cur")) ;;
        metrics)
            COMPREPLY=($(compgen -W "--openmetrics --socket --help" -- "$cur")) ;;
        enroll)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--screen --timeout --duress --remove --status" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "pattern code" -- "$cur"))
            fi ;;
        hash-pattern)
            COMPREPLY=($(compgen -W "--grid" -- "$cur")) ;;
        replay)
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--desc --quirk --json" -- "$cur"))
            else
                _filedir '@(evemu|events)'
            fi ;;
        preview)
            COMPREPLY=($(compgen -W "--screen --state --size --out -C --dpi" -- "$cur")) ;;
    esac
} &&
    complete -F _touchlockctl touchlockctl
