import Glibc
import TouchlockCore
import TouchlockPixels
import TouchlockSystem

/// A display without hardware: the same renderer and damage path, with each presented
/// frame written as a PNG file (when an output folder is given). A frame "completes" on
/// the next turn of the event loop, so the flow matches a page flip without sleeping.
/// The PNG encoder is passed in (the renderer's), so the display layer links no cairo.
/// With a rotation, the PNG is the panel's picture: the frame turned as a KMS output would.
public final class HeadlessDisplay: Display {
    /// The logical size: the panel's (`--size`), turned by `rotation`.
    public let size: Size
    public let rotation: Rotation
    /// The panel's picture, when the rotation turns it.
    private let panel: ShadowBuffer?
    public let physicalSize: (width: Int, height: Int)? = nil
    public private(set) var isBusy = false
    public var onFrameComplete: ((Instant) -> Void)?
    public let name = "headless"
    public let state = OutputState(name: "headless")
    public var onStateChanged: (() -> Void)?
    public var onRedrawNeeded: (() -> Void)?
    private let loop: EventLoop
    private let outputDirectory: String?
    private let writePNG: (ShadowBuffer, String) throws -> Void
    /// Frames presented so far; frame N is written as frame-NNNNN.png.
    public private(set) var frames = 0
    /// Whether each frame is written as a PNG file when presented (an output folder was
    /// given): presenting then takes the time of encoding and writing it.
    public var writesFiles: Bool { outputDirectory != nil }

    public init(size: Size, rotation: Rotation = .degrees0, loop: EventLoop, outputDirectory: String?,
                writePNG: @escaping (ShadowBuffer, String) throws -> Void) throws(SystemError) {
        self.size = rotation.logicalSize(panel: size)
        self.rotation = rotation
        panel = rotation == .degrees0 || outputDirectory == nil ? nil : ShadowBuffer(size: size)
        self.writePNG = writePNG
        self.loop = loop
        self.outputDirectory = outputDirectory
        if let dir = outputDirectory {
            if mkdir(dir, 0o755) != 0 && errno != EEXIST { throw SystemError("mkdir", .current, dir) }
        }
    }

    public func present(_ shadow: ShadowBuffer, damage: Damage) throws(SystemError) {
        precondition(!isBusy, "present while a frame is in flight")
        frames += 1
        if let dir = outputDirectory {
            let name = String(frames)
            let path = "\(dir)/frame-\(String(repeating: "0", count: max(0, 5 - name.count)))\(name).png"
            if let panel { shadow.copy(damage.rects, to: panel.pixels, stride: panel.stride, rotation: rotation) }
            do { try writePNG(panel ?? shadow, path) } catch {
                throw SystemError("write png", Errno(rawValue: EIO), "\(error)")
            }
        }
        isBusy = true
        loop.deferred { [weak self] in
            guard let self else { return }
            self.isBusy = false
            self.onFrameComplete?(EventLoop.now())
        }
    }

    public func shutdown() {}
}
