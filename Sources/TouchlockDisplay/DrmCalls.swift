import CDrm
import Glibc
import TouchlockSystem

/// The libdrm calls of the KMS output, as one table of functions: the DRM half of the
/// syscall seam (`SystemCalls` is the libc half, for open, close, poll and mmap). Tests
/// replace it with a fake device to force EACCES, EBUSY and ENODEV and to record the
/// order of calls; in release builds `current` is `real`, inlined.
public struct DrmCalls: Sendable {
    public var getCap: @Sendable (_ fd: Int32, _ capability: UInt64, _ value: UnsafeMutablePointer<UInt64>) -> Int32
    public var isMaster: @Sendable (_ fd: Int32) -> Int32
    public var setMaster: @Sendable (_ fd: Int32) -> Int32
    public var dropMaster: @Sendable (_ fd: Int32) -> Int32
    public var getResources: @Sendable (_ fd: Int32) -> drmModeResPtr?
    public var freeResources: @Sendable (drmModeResPtr) -> Void
    public var getConnector: @Sendable (_ fd: Int32, _ id: UInt32) -> drmModeConnectorPtr?
    public var freeConnector: @Sendable (drmModeConnectorPtr) -> Void
    public var getEncoder: @Sendable (_ fd: Int32, _ id: UInt32) -> drmModeEncoderPtr?
    public var freeEncoder: @Sendable (drmModeEncoderPtr) -> Void
    public var getCrtc: @Sendable (_ fd: Int32, _ id: UInt32) -> drmModeCrtcPtr?
    public var freeCrtc: @Sendable (drmModeCrtcPtr) -> Void
    public var createDumbBuffer: @Sendable (_ fd: Int32, _ width: UInt32, _ height: UInt32, _ bpp: UInt32,
                                            _ handle: UnsafeMutablePointer<UInt32>, _ pitch: UnsafeMutablePointer<UInt32>,
                                            _ size: UnsafeMutablePointer<UInt64>) -> Int32
    public var addFB: @Sendable (_ fd: Int32, _ width: UInt32, _ height: UInt32, _ depth: UInt8, _ bpp: UInt8,
                                 _ pitch: UInt32, _ handle: UInt32, _ fbID: UnsafeMutablePointer<UInt32>) -> Int32
    public var mapDumbBuffer: @Sendable (_ fd: Int32, _ handle: UInt32, _ offset: UnsafeMutablePointer<UInt64>) -> Int32
    public var rmFB: @Sendable (_ fd: Int32, _ fbID: UInt32) -> Int32
    public var destroyDumbBuffer: @Sendable (_ fd: Int32, _ handle: UInt32) -> Int32
    /// The buffer handle of a framebuffer this descriptor made (0: unknown, or not master).
    public var framebufferHandle: @Sendable (_ fd: Int32, _ fbID: UInt32) -> UInt32
    public var setCrtc: @Sendable (_ fd: Int32, _ crtc: UInt32, _ fbID: UInt32, _ x: UInt32, _ y: UInt32,
                                   _ connectors: UnsafeMutablePointer<UInt32>?, _ count: Int32,
                                   _ mode: UnsafeMutablePointer<drmModeModeInfo>?) -> Int32
    public var pageFlip: @Sendable (_ fd: Int32, _ crtc: UInt32, _ fbID: UInt32, _ flags: UInt32,
                                    _ userData: UnsafeMutableRawPointer?) -> Int32
    public var handleEvent: @Sendable (_ fd: Int32, _ context: UnsafeMutablePointer<drmEventContext>) -> Int32
    public var getObjectProperties: @Sendable (_ fd: Int32, _ id: UInt32, _ type: UInt32) -> drmModeObjectPropertiesPtr?
    public var freeObjectProperties: @Sendable (drmModeObjectPropertiesPtr) -> Void
    public var getProperty: @Sendable (_ fd: Int32, _ id: UInt32) -> drmModePropertyPtr?
    public var freeProperty: @Sendable (drmModePropertyPtr) -> Void
    public var connectorSetProperty: @Sendable (_ fd: Int32, _ connector: UInt32, _ property: UInt32, _ value: UInt64) -> Int32

    @usableFromInline init(
        getCap: @escaping @Sendable (Int32, UInt64, UnsafeMutablePointer<UInt64>) -> Int32,
        isMaster: @escaping @Sendable (Int32) -> Int32,
        setMaster: @escaping @Sendable (Int32) -> Int32,
        dropMaster: @escaping @Sendable (Int32) -> Int32,
        getResources: @escaping @Sendable (Int32) -> drmModeResPtr?,
        freeResources: @escaping @Sendable (drmModeResPtr) -> Void,
        getConnector: @escaping @Sendable (Int32, UInt32) -> drmModeConnectorPtr?,
        freeConnector: @escaping @Sendable (drmModeConnectorPtr) -> Void,
        getEncoder: @escaping @Sendable (Int32, UInt32) -> drmModeEncoderPtr?,
        freeEncoder: @escaping @Sendable (drmModeEncoderPtr) -> Void,
        getCrtc: @escaping @Sendable (Int32, UInt32) -> drmModeCrtcPtr?,
        freeCrtc: @escaping @Sendable (drmModeCrtcPtr) -> Void,
        createDumbBuffer: @escaping @Sendable (Int32, UInt32, UInt32, UInt32,
                                            UnsafeMutablePointer<UInt32>, UnsafeMutablePointer<UInt32>,
                                            UnsafeMutablePointer<UInt64>) -> Int32,
        addFB: @escaping @Sendable (Int32, UInt32, UInt32, UInt8, UInt8,
                                 UInt32, UInt32, UnsafeMutablePointer<UInt32>) -> Int32,
        mapDumbBuffer: @escaping @Sendable (Int32, UInt32, UnsafeMutablePointer<UInt64>) -> Int32,
        rmFB: @escaping @Sendable (Int32, UInt32) -> Int32,
        destroyDumbBuffer: @escaping @Sendable (Int32, UInt32) -> Int32,
        framebufferHandle: @escaping @Sendable (Int32, UInt32) -> UInt32,
        setCrtc: @escaping @Sendable (Int32, UInt32, UInt32, UInt32, UInt32,
                                   UnsafeMutablePointer<UInt32>?, Int32,
                                   UnsafeMutablePointer<drmModeModeInfo>?) -> Int32,
        pageFlip: @escaping @Sendable (Int32, UInt32, UInt32, UInt32,
                                    UnsafeMutableRawPointer?) -> Int32,
        handleEvent: @escaping @Sendable (Int32, UnsafeMutablePointer<drmEventContext>) -> Int32,
        getObjectProperties: @escaping @Sendable (Int32, UInt32, UInt32) -> drmModeObjectPropertiesPtr?,
        freeObjectProperties: @escaping @Sendable (drmModeObjectPropertiesPtr) -> Void,
        getProperty: @escaping @Sendable (Int32, UInt32) -> drmModePropertyPtr?,
        freeProperty: @escaping @Sendable (drmModePropertyPtr) -> Void,
        connectorSetProperty: @escaping @Sendable (Int32, UInt32, UInt32, UInt64) -> Int32
    ) {
        self.getCap = getCap
        self.isMaster = isMaster
        self.setMaster = setMaster
        self.dropMaster = dropMaster
        self.getResources = getResources
        self.freeResources = freeResources
        self.getConnector = getConnector
        self.freeConnector = freeConnector
        self.getEncoder = getEncoder
        self.freeEncoder = freeEncoder
        self.getCrtc = getCrtc
        self.freeCrtc = freeCrtc
        self.createDumbBuffer = createDumbBuffer
        self.addFB = addFB
        self.mapDumbBuffer = mapDumbBuffer
        self.rmFB = rmFB
        self.destroyDumbBuffer = destroyDumbBuffer
        self.framebufferHandle = framebufferHandle
        self.setCrtc = setCrtc
        self.pageFlip = pageFlip
        self.handleEvent = handleEvent
        self.getObjectProperties = getObjectProperties
        self.freeObjectProperties = freeObjectProperties
        self.getProperty = getProperty
        self.freeProperty = freeProperty
        self.connectorSetProperty = connectorSetProperty
    }

    /// libdrm.
    @inlinable public static var real: DrmCalls {
        DrmCalls(
            getCap: { drmGetCap($0, $1, $2) },
            isMaster: { drmIsMaster($0) },
            setMaster: { drmSetMaster($0) },
            dropMaster: { drmDropMaster($0) },
            getResources: { drmModeGetResources($0) },
            freeResources: { drmModeFreeResources($0) },
            getConnector: { drmModeGetConnector($0, $1) },
            freeConnector: { drmModeFreeConnector($0) },
            getEncoder: { drmModeGetEncoder($0, $1) },
            freeEncoder: { drmModeFreeEncoder($0) },
            getCrtc: { drmModeGetCrtc($0, $1) },
            freeCrtc: { drmModeFreeCrtc($0) },
            createDumbBuffer: { drmModeCreateDumbBuffer($0, $1, $2, $3, 0, $4, $5, $6) },
            addFB: { drmModeAddFB($0, $1, $2, $3, $4, $5, $6, $7) },
            mapDumbBuffer: { drmModeMapDumbBuffer($0, $1, $2) },
            rmFB: { drmModeRmFB($0, $1) },
            destroyDumbBuffer: { drmModeDestroyDumbBuffer($0, $1) },
            framebufferHandle: { fd, id in
                guard let fb = drmModeGetFB(fd, id) else { return 0 }
                defer { drmModeFreeFB(fb) }
                return fb.pointee.handle
            },
            setCrtc: { drmModeSetCrtc($0, $1, $2, $3, $4, $5, $6, $7) },
            pageFlip: { drmModePageFlip($0, $1, $2, $3, $4) },
            handleEvent: { drmHandleEvent($0, $1) },
            getObjectProperties: { drmModeObjectGetProperties($0, $1, $2) },
            freeObjectProperties: { drmModeFreeObjectProperties($0) },
            getProperty: { drmModeGetProperty($0, $1) },
            freeProperty: { drmModeFreeProperty($0) },
            connectorSetProperty: { drmModeConnectorSetProperty($0, $1, $2, $3) })
    }

    #if ENABLE_MOCKING
    @TaskLocal public static var current: DrmCalls = .real
    #else
    @inlinable public static var current: DrmCalls { .real }
    #endif
}
