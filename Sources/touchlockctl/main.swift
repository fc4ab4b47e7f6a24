import Glibc
let args = Array(CommandLine.arguments.dropFirst())
if args.first == "hash-pattern" { exit(hashPatternCommand(Array(args.dropFirst()))) }
