import Testing

/// The error `body` throws, as `#expect(throws:)` returns it from Swift 6.1 on (Swift 6.0's
/// returns nothing): an issue is recorded when it throws nothing, or an error of another type.
func thrown<E: Error, R>(_ type: E.Type, sourceLocation: SourceLocation = #_sourceLocation,
                      _ body: () throws -> R) -> E? {
    do {
        _ = try body()
        Issue.record("expected \(E.self) to be thrown, none was", sourceLocation: sourceLocation)
    } catch let error as E {
        return error
    } catch {
        Issue.record("expected \(E.self) to be thrown, \(error) was", sourceLocation: sourceLocation)
    }
    return nil
}
