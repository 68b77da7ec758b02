import Foundation

/// One listener's place in one client: posts that client's events to the listener's
/// ``ListenerMailbox``, which it shares with every other client the listener is registered on,
/// and counts the events the mailbox had no room for.
final class EventDispatcher: Sendable {
  /// The listener, as this client was given it.
  let listener: any EventListener
  /// Which mailbox the listener's events go to.
  let key: ListenerKey
  private let mailbox: ListenerMailbox
  private let dropped = Locked<Int>(0)

  init(_ listener: any EventListener) {
    self.listener = listener
    key = ListenerKey(listener)
    mailbox = ListenerMailbox.shared(for: key)
  }

  /// Queue an event for the listener, or count it dropped when its mailbox is full.
  func post(_ event: CallEvent) {
    if !mailbox.post(event, for: self) {
      dropped.withLock { $0 += 1 }
    }
  }

  /// The events of this client that the listener's mailbox had no room for.
  var droppedEvents: Int {
    dropped.withLock { $0 }
  }

  /// The listener's events waiting, from every client.
  var pendingEvents: Int {
    mailbox.undelivered
  }
}

/// What tells listeners apart: a class instance by its identity, a value (a struct or an enum)
/// by its type, so that the same listener registered on many clients shares one mailbox.
enum ListenerKey: Hashable, Sendable {
  case instance(ObjectIdentifier)
  case valueType(ObjectIdentifier)

  init(_ listener: any EventListener) {
    let listenerType = Swift.type(of: listener)
    if listenerType is AnyClass {
      self = .instance(ObjectIdentifier(listener as AnyObject))
    } else {
      self = .valueType(ObjectIdentifier(listenerType))
    }
  }
}

/// Delivers one listener's events, from every client it is registered on, on a thread of its
/// own, in the order they were posted, without making the poster wait.
///
/// Posting appends to a list under a lock; when no thread is delivering, it starts one, which
/// waits five milliseconds (so that the events of many calls go over in one hand-off), then
/// hands over every event, batch after batch, and ends when none is left. So a listener has at
/// most one thread, and only while it has events: a blocked listener holds that one thread,
/// however many clients it hears, and never one of the system's shared pools. At most
/// ``capacity`` events wait besides the one the listener is hearing: beyond that a post is
/// refused, and its dispatcher counts it dropped.
final class ListenerMailbox: Sendable {
  /// The most events that wait for one listener: ``APIClient/maximumPendingEvents``.
  static let capacity = 10_000
  /// How long events gather before a thread hands them over.
  private static let gathering: TimeInterval = 0.005

  private struct State {
    /// Events not yet taken by the delivering thread, oldest first.
    var events: [(dispatcher: EventDispatcher, event: CallEvent)] = []
    /// Events accepted and not yet handed to the listener: the waiting ones, and the rest of
    /// the batch in the delivering thread's hands.
    var undelivered = 0
    /// Whether a thread is delivering (or about to).
    var delivering = false
  }

  private let key: ListenerKey
  private let state = Locked(State())

  private init(key: ListenerKey) {
    self.key = key
  }

  deinit {
    Self.table.withLock { table in
      if table[key]?.mailbox == nil {
        table[key] = nil
      }
    }
  }

  /// Accept an event for the listener `dispatcher` holds; `false` when ``capacity`` events
  /// wait already.
  func post(_ event: CallEvent, for dispatcher: EventDispatcher) -> Bool {
    let (accepted, starts) = state.withLock { state -> (Bool, Bool) in
      guard state.undelivered < Self.capacity else { return (false, false) }
      state.events.append((dispatcher, event))
      state.undelivered += 1
      guard !state.delivering else { return (true, false) }
      state.delivering = true
      return (true, true)
    }
    if starts {
      let thread = Thread { [self] in deliver() }
      thread.name = "errand.events"
      thread.start()
    }
    return accepted
  }

  /// The events accepted and not yet handed to the listener.
  var undelivered: Int {
    state.withLock { $0.undelivered }
  }

  /// Hand every event to its listener, batch after batch, until none is left; on the thread
  /// ``post(_:for:)`` started.
  private func deliver() {
    Thread.sleep(forTimeInterval: Self.gathering)
    // Two lists take turns: the posters fill one while this hands over the other.
    var batch: [(dispatcher: EventDispatcher, event: CallEvent)] = []
    while true {
      batch.removeAll(keepingCapacity: true)
      state.withLock { state in
        swap(&batch, &state.events)
        state.delivering = !batch.isEmpty
      }
      guard !batch.isEmpty else { return }
      // Oldest last, so that each event leaves the batch (and memory) as it is handed over.
      batch.reverse()
      while let (dispatcher, event) = batch.popLast() {
        // Room for one more event, as this one goes to the listener: the one it is hearing is
        // not counted, so a listener that is blocked holds at most `capacity` events besides.
        state.withLock { $0.undelivered -= 1 }
        // What a listener throws is its own business: it cannot change the call.
        try? dispatcher.listener.receive(event)
      }
    }
  }

  /// The mailboxes of the listeners registered on some client, by ``ListenerKey``; each entry
  /// goes when its mailbox does.
  private static let table = Locked<[ListenerKey: WeakMailbox]>([:])

  private struct WeakMailbox: Sendable {
    weak var mailbox: ListenerMailbox?
  }

  /// The listener's mailbox, made when no client holds one for it.
  static func shared(for key: ListenerKey) -> ListenerMailbox {
    table.withLock { table in
      if let mailbox = table[key]?.mailbox { return mailbox }
      let mailbox = ListenerMailbox(key: key)
      table[key] = WeakMailbox(mailbox: mailbox)
      return mailbox
    }
  }
}
