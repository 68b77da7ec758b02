// The shapes of the Combine declarations Errand uses, as Apple's SDK declares them, so that Linux
// can type-check Errand's `#if canImport(Combine)` code. Not a Combine: nothing here runs. Add a
// declaration here, copied from Apple's documentation, when Errand starts using it.
public protocol Cancellable {
  func cancel()
}

public enum Subscribers {
  public enum Completion<Failure: Error> {
    case finished
    case failure(Failure)
  }
  public struct Demand {}
}

public protocol Subscription: Cancellable {}

public protocol Subscriber<Input, Failure> {
  associatedtype Input
  associatedtype Failure: Error
}

public protocol Publisher<Output, Failure> {
  associatedtype Output
  associatedtype Failure: Error
  func receive<S: Subscriber>(subscriber: S) where Failure == S.Failure, Output == S.Input
}

public struct Deferred<DeferredPublisher: Publisher>: Publisher {
  public typealias Output = DeferredPublisher.Output
  public typealias Failure = DeferredPublisher.Failure
  public let createPublisher: () -> DeferredPublisher
  public init(createPublisher: @escaping () -> DeferredPublisher) {
    self.createPublisher = createPublisher
  }
  public func receive<S: Subscriber>(subscriber: S) where Failure == S.Failure, Output == S.Input {}
}

final public class Future<Output, Failure: Error>: Publisher {
  public typealias Promise = (Result<Output, Failure>) -> Void
  public init(_ attemptToFulfill: @escaping (@escaping Promise) -> Void) {}
  final public func receive<S: Subscriber>(subscriber: S)
  where Failure == S.Failure, Output == S.Input {}
}

public enum Publishers {
  public struct HandleEvents<Upstream: Publisher>: Publisher {
    public typealias Output = Upstream.Output
    public typealias Failure = Upstream.Failure
    public func receive<S: Subscriber>(subscriber: S)
    where Failure == S.Failure, Output == S.Input {}
  }
}

public struct AnyPublisher<Output, Failure: Error>: Publisher {
  public func receive<S: Subscriber>(subscriber: S) where Failure == S.Failure, Output == S.Input {}
}

extension Publisher {
  public func handleEvents(
    receiveSubscription: ((any Subscription) -> Void)? = nil,
    receiveOutput: ((Output) -> Void)? = nil,
    receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)? = nil,
    receiveCancel: (() -> Void)? = nil,
    receiveRequest: ((Subscribers.Demand) -> Void)? = nil
  ) -> Publishers.HandleEvents<Self> { fatalError() }

  public func eraseToAnyPublisher() -> AnyPublisher<Output, Failure> { fatalError() }
}
