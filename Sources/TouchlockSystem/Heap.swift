import CLinux

/// The C library's heap.
public enum Heap {
    /// Gives the pages of memory freed so far back to the system (glibc's malloc_trim),
    /// wherever they lie in the heap. Start-up allocates and frees more than the daemon
    /// keeps (the configuration's text, a recording to replay, the layout's first
    /// passes); freed, that memory stays resident until the heap is trimmed, because the
    /// allocator only gives back free space at the top of its heap by itself.
    /// Returns whether any memory was given back.
    @discardableResult
    public static func trim() -> Bool { malloc_trim(0) != 0 }
}
