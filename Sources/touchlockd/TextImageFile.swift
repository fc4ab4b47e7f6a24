import TouchlockRender
import TouchlockCore
import TouchlockSystem

/// Where the masks of the lock screen's text are kept between starts (`TextImages`): a
/// file beside the state file, rewritten when text was drawn that it did not have. Losing
/// it costs only time: the text is drawn from its glyphs and kept again.
struct TextImageFile {
    let path: String
    /// False beside a state file that is not trusted: nothing is read or written there.
    let trusted: Bool

    init(statePath: String, trusted: Bool = true) {
        path = DurableFile.directory(of: statePath) + "/text-images"
        self.trusted = trusted
    }

    /// The masks kept by the last run; none if there is no file or it cannot be used.
    func load() -> TextImages {
        guard trusted else { return TextImages() }
        do {
            return try TextImages(decoding: FileContents.bytes(path, limit: 2 * TextImages.byteBudget))
        } catch let error as SystemError where error.errno == .noEntry {
            return TextImages()
        } catch {
            Log.warning("\(path): \(error); the text is drawn from its glyphs and kept again")
            return TextImages()
        }
    }

    /// Writes the masks drawn since they were read, if any are new.
    func save(_ images: TextImages) {
        guard trusted, images.changed else { return }
        let bytes = images.encoded()
        do {
            try DurableFile.makeDirectory(DurableFile.directory(of: path))
            try DurableFile.replace(path, with: bytes, mode: 0o600)
        } catch {
            Log.warning("\(path): \(error)")
        }
    }
}
