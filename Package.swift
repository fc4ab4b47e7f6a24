// swift-tools-version:6.0
import Foundation
import PackageDescription

// Data flows one way: evdev events -> touch frames -> gesture machines -> session
// -> scene -> pixels -> KMS; session -> socket events. TouchlockCore is pure (no file
// descriptors, no clocks); every other library target is a thin layer around one C
// library or one kernel interface.
// Debug builds let tests replace the syscall tables (SystemCalls, DrmCalls, EvdevCalls);
// release builds call the C libraries directly.
// Release code reaches the metadata of a concrete generic type (an Array of a struct, a
// Dictionary) through a direct accessor, not by its mangled name: the runtime's demangler
// then does not run at the first use of each such type, which cut exec to first frame by
// about a tenth in the VM protocol, for 20 kB of code.
// Each function in a section of its own (-function-sections, a frontend option: given to
// the driver, it warned once per module), so that the linker can lay out the daemon's hot
// functions first (touchlockdLink below).
// libdrm and libevdev are linked from their static archives (CDrm's and CEvdev's linker
// scripts) and have no pkg-config here, which would link the shared ones too: their
// headers' directories, which pkg-config would give, are these.
let swiftFlags: [SwiftSetting] = [
    .unsafeFlags(["-Xcc", "-I/usr/include/libdrm", "-Xcc", "-I/usr/include/libevdev-1.0"]),
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors", "-Xfrontend", "-function-sections"],
                 .when(configuration: .release)),
]
// cairo and pixman from Debian's static archives where the -dev packages ship them (Debian 12);
// Debian 13's ship none, and there the shared libcairo is linked (Modules/CCairo/shared's
// linker script), with the X11 and xcb libraries it needs. TouchlockdTests knows which.
let staticCairo = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []).contains { dir in
    dir.hasSuffix("-linux-gnu") && ["libcairo.a", "libpixman-1.a"].allSatisfy {
        FileManager.default.fileExists(atPath: "/usr/lib/\(dir)/\($0)")
    }
}
let cairoLinkDirectory = "\(Context.packageDirectory)/Modules/CCairo" + (staticCairo ? "" : "/shared")
let mocking: [SwiftSetting] = [.define("ENABLE_MOCKING", .when(configuration: .debug))] + swiftFlags
// Release executables are linked by lld with packed relative relocations (DT_RELR, glibc
// 2.36): the static runtime's 23,000 relocations take 5 kB instead of 550 kB that the
// loader reads at every start. Nothing outside an executable calls into it, so its own
// functions are not exported (the static runtime's link arguments ask for -export-dynamic):
// touchlockd's dynamic symbol table, which the loader searches first for every symbol any
// library looks up, would otherwise hold 5,217 of them in 440 kB.
let releaseLink: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                  "-Xlinker", "--no-export-dynamic"], .when(configuration: .release)),
]
// touchlockd's functions that run at start, when it draws and when it takes a touch, side by
// side at the start of its text (scripts/symbol-order writes the list): the kernel maps 64 kB
// around each page fault, so packed hot code maps 1.1 MB less of the executable than the
// same code spread over 7 MB (Rss of the executable after start, 6.4 -> 5.3 MB).
let touchlockdLink: [LinkerSetting] = releaseLink + [
    .unsafeFlags(["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/touchlockd.symbol-order",
                  "-Xlinker", "--no-warn-symbol-ordering", "-Xlinker", "-T", "-Xlinker", "\(Context.packageDirectory)/scripts/touchlockd.ld"], .when(configuration: .release)),
]

let package = Package(
    name: "touchlock",
    products: [
        .executable(name: "touchlockd", targets: ["touchlockd"]),
        .executable(name: "touchlockctl", targets: ["touchlockctl"]),
        .executable(name: "touchlock-bench", targets: ["touchlock-bench"]),
        .executable(name: "touchlock-mqtt", targets: ["touchlock-mqtt"]),
    ],
    targets: [
        // C libraries from Debian, each behind a minimal shim header.
        // libevdev, libdrm and inih are linked from Debian's static archives (each module's
        // linker script): they read only the kernel's devices and the daemon's own config,
        // and the loader then has three libraries fewer to map and bind at every start.
        .systemLibrary(name: "CEvdev", path: "Modules/CEvdev", providers: [.apt(["libevdev-dev"])]),
        .systemLibrary(name: "CDrm", path: "Modules/CDrm", providers: [.apt(["libdrm-dev"])]),
        // Linked from Debian's static cairo and pixman (see its module map); pkg-config's
        // fontconfig gives the FreeType include path cairo-ft.h needs. The font stack
        // (fontconfig, FreeType, libpng, expat, zlib) stays shared: Debian's security
        // updates to it reach the daemon without a rebuild.
        .systemLibrary(name: "CCairo", path: "Modules/CCairo", pkgConfig: "fontconfig",
                       providers: [.apt(["libcairo2-dev", "libfontconfig-dev"])]),
        .systemLibrary(name: "CLinux", path: "Modules/CLinux"),
        .systemLibrary(name: "CInih", path: "Modules/CInih", providers: [.apt(["libinih-dev"])]),
        // libudev (shared: libudev1 is in every Debian system) for the properties udev's
        // rules and hwdb give input devices, read from udevd's database through its API.
        .systemLibrary(name: "CUdev", path: "Modules/CUdev", pkgConfig: "libudev",
                       providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CCrypt", path: "Modules/CCrypt", pkgConfig: "libcrypt",
                       providers: [.apt(["libcrypt-dev"])]),
        // HMAC and HKDF for one-time service codes, from Debian's nettle (shared: libnettle8
        // is on every Debian system, and its security updates reach us without a rebuild).
        .systemLibrary(name: "CNettle", path: "Modules/CNettle", providers: [.apt(["nettle-dev"])]),
        // The program's argc and argv, captured before main by an ELF constructor, so that
        // they are read without /proc (Swift's CommandLine reads /proc/self/cmdline).
        .target(name: "CArguments", path: "Modules/CArguments"),
        // logind over sd-bus, libsystemd loaded with dlopen when first used (see its header).
        .target(name: "CLogind", path: "Modules/CLogind"),
        // Shaping and bidirectional order, HarfBuzz and FriBidi opened with dlopen when a text
        // first needs them (see its header); their headers are all the build needs.
        .target(name: "CShape", path: "Modules/CShape",
                cSettings: [.unsafeFlags(["-I/usr/include/harfbuzz", "-I/usr/include/freetype2", "-I/usr/include/fribidi"])]),
        // libwayland-client, ext-session-lock-v1's glue from wayland-scanner (committed,
        // scripts/wayland-protocols writes it; WaylandGlueTests says when it is stale), and
        // libxkbcommon for the keymap the compositor sends.
        .target(name: "CWayland", path: "Modules/CWayland",
                linkerSettings: [.linkedLibrary("wayland-client"), .linkedLibrary("xkbcommon")]),
        // libmosquitto (shared, from libmosquitto1) for touchlock-mqtt alone: the daemon
        // never links it.
        .systemLibrary(name: "CMosquitto", path: "Modules/CMosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // The install paths, as C string macros `make` can set (-Xcc -D...).
        .systemLibrary(name: "CPaths", path: "Modules/CPaths"),

        // Pure logic: frames, geometry, gesture and session machines, scene.
        .target(name: "TouchlockCore", dependencies: ["CPaths"], swiftSettings: swiftFlags),
        // Errno, epoll event loop, timers, signals: the one place syscalls are wrapped.
        .target(name: "TouchlockSystem", dependencies: ["TouchlockCore", "CLinux"], swiftSettings: mocking),
        // udev's properties of a device, by its number, through libudev.
        .target(name: "TouchlockUdev", dependencies: ["TouchlockCore", "TouchlockSystem", "CUdev"], swiftSettings: swiftFlags),
        .target(name: "TouchlockInput", dependencies: ["TouchlockCore", "TouchlockSystem", "TouchlockUdev", "CEvdev"],
                swiftSettings: mocking,
                linkerSettings: [.unsafeFlags(["-Xlinker", "-L\(Context.packageDirectory)/Modules/CEvdev"])]),
        // The frame in system memory that Render draws into and Display copies from.
        .target(name: "TouchlockPixels", dependencies: ["TouchlockCore"], swiftSettings: swiftFlags),
        .target(name: "TouchlockRender", dependencies: ["TouchlockCore", "TouchlockSystem", "TouchlockPixels", "CCairo", "CShape"],
                swiftSettings: swiftFlags,
                linkerSettings: [.unsafeFlags(["-Xlinker", "-L\(cairoLinkDirectory)"])]),
        .target(name: "TouchlockDisplay",
                dependencies: ["TouchlockCore", "TouchlockSystem", "TouchlockPixels", "CDrm", "CLinux"],
                swiftSettings: mocking,
                linkerSettings: [.unsafeFlags(["-Xlinker", "-L\(Context.packageDirectory)/Modules/CDrm"])]),
        // A client of the compositor's ext-session-lock-v1: lock surfaces drawn from the
        // shadow buffer, wl_touch and wl_keyboard in, on the loop.
        .target(name: "TouchlockWayland",
                dependencies: ["TouchlockCore", "TouchlockSystem", "TouchlockPixels", "TouchlockDisplay", "CWayland"],
                swiftSettings: swiftFlags),
        .target(name: "TouchlockControl", dependencies: ["TouchlockCore", "TouchlockSystem"], swiftSettings: swiftFlags),
        // logind's Lock, Unlock and PrepareForSleep, its sleep delay and idle hint, on the loop.
        .target(name: "TouchlockLogind", dependencies: ["TouchlockCore", "TouchlockSystem", "CLogind"], swiftSettings: swiftFlags),
        .target(name: "TouchlockSecrets", dependencies: ["TouchlockCore", "TouchlockSystem", "CCrypt", "CNettle"], swiftSettings: swiftFlags),
        // One command-line convention for both binaries: options, help, usage errors.
        .target(name: "TouchlockCommandLine", dependencies: ["TouchlockSystem", "CArguments"], swiftSettings: swiftFlags),
        // The config files, in their order, parsed with libinih.
        .target(name: "TouchlockConfig", dependencies: ["TouchlockCore", "TouchlockSystem", "CInih"], swiftSettings: swiftFlags,
                linkerSettings: [.unsafeFlags(["-Xlinker", "-L\(Context.packageDirectory)/Modules/CInih"])]),
        // libmosquitto driven from the event loop by its socket.
        .target(name: "TouchlockMQTT", dependencies: ["TouchlockCore", "CMosquitto"], swiftSettings: swiftFlags),

        .executableTarget(name: "touchlockd", dependencies: [
            "TouchlockCore", "TouchlockSystem", "TouchlockInput", "TouchlockRender",
            "TouchlockDisplay", "TouchlockControl", "TouchlockSecrets", "TouchlockConfig", "CLinux",
            "TouchlockCommandLine", "TouchlockLogind", "TouchlockWayland",
        ], swiftSettings: swiftFlags, linkerSettings: touchlockdLink),
        .executableTarget(name: "touchlockctl", dependencies: [
            "TouchlockCore", "TouchlockSystem", "TouchlockControl", "TouchlockSecrets", "TouchlockRender",
            "TouchlockConfig", "TouchlockCommandLine",
        ], swiftSettings: swiftFlags, linkerSettings: releaseLink),
        // The bridge between the control socket and an MQTT broker (its own unit and user).
        .executableTarget(name: "touchlock-mqtt", dependencies: [
            "TouchlockCore", "TouchlockSystem", "TouchlockControl", "TouchlockConfig", "TouchlockMQTT",
            "TouchlockCommandLine",
        ], swiftSettings: swiftFlags, linkerSettings: releaseLink),

        // Prints figures against their floors and targets; CI runs it in a tiny size.
        .executableTarget(name: "touchlock-bench", dependencies: [
            "TouchlockCore", "TouchlockSystem", "TouchlockInput", "TouchlockRender",
        ], swiftSettings: swiftFlags),

        .testTarget(name: "TouchlockCoreTests", dependencies: ["TouchlockCore"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockUdevTests", dependencies: ["TouchlockUdev"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockInputTests", dependencies: ["TouchlockInput"], exclude: ["Fixtures"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockPixelsTests", dependencies: ["TouchlockPixels"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockRenderTests", dependencies: ["TouchlockRender", "TouchlockSystem"], exclude: ["Golden"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockControlTests", dependencies: ["TouchlockControl"], swiftSettings: swiftFlags),
        // The VT hand-off, and the syscall seam: the KMS output against a fake card that fails on demand.
        .testTarget(name: "TouchlockDisplayTests", dependencies: ["TouchlockDisplay", "TouchlockSystem", "CDrm"], swiftSettings: swiftFlags),
        // The committed protocol glue against wayland-scanner, and the client against a real
        // compositor (Debian 12's weston, headless).
        .testTarget(name: "TouchlockWaylandTests", dependencies: ["TouchlockWayland", "TouchlockSystem"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockSystemTests", dependencies: ["TouchlockSystem"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockSecretsTests", dependencies: ["TouchlockSecrets"], swiftSettings: swiftFlags),
        .testTarget(name: "TouchlockCommandLineTests", dependencies: ["TouchlockCommandLine"], swiftSettings: swiftFlags),
        // The man pages, the shells' completions, the README and the guides under docs/
        // against the definitions they describe: both programs' commands and options, the
        // protocol's types, the config's settings, the state machines' actions, the links.
        .testTarget(name: "TouchlockDocsTests", dependencies: [
            "touchlockctl", "touchlockd", "TouchlockCommandLine", "TouchlockControl", "TouchlockCore",
        ], swiftSettings: swiftFlags),
        // Runs the built touchlockd as a real process (build with --build-tests first), and
        // tests its parts that need no process of their own (the state store), and the
        // daemon's hand-off over the display tests' fake card (FakeDrmDevice.swift, the same
        // file) and a VT the test answers for the kernel.
        .testTarget(name: "TouchlockdTests", dependencies: [
            "touchlockd", "touchlock-mqtt", "TouchlockCore", "TouchlockSystem", "TouchlockControl", "TouchlockSecrets", "TouchlockConfig",
            "TouchlockCommandLine", "TouchlockRender", "TouchlockDisplay", "CDrm", "CLinux",
        ], exclude: ["promcheck.py", "node_exporter_check.py", "logind_standin.py", "logind_forger.py"],
        swiftSettings: swiftFlags + (staticCairo ? [.define("TOUCHLOCK_STATIC_CAIRO")] : [])),
    ]
)
