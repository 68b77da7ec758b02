import Foundation

/// The memory half of an ``HTTPCache``: entries by URL and by the values of the request headers
/// their `Vary` names, in a list from least to most recently used, within a byte budget. Every
/// call takes a few steps however many entries are stored: a lookup reads two dictionaries and
/// moves one entry to the end of the list; an insert evicts from its front.
///
/// The list is intrusive and index-based: each entry lives in a slot of one array and names the
/// slots before and after it, and freed slots are reused. A URL's variants share the `Vary` names
/// of the response stored last: a response to that URL that names other headers replaces them
/// (the server changed what the resource varies on), so a lookup tries one set of names.
struct CacheStore {
  private struct Slot {
    var entry: CacheEntry?
    var key = ""
    var values: [String?] = []
    var cost = 0
    var older = -1
    var newer = -1
  }

  /// A URL's variants: the `Vary` names (sorted, lowercased), and the slot of each set of values.
  private struct Variants {
    var names: [String]
    var slots: [[String?]: Int] = [:]
  }

  private var slots: [Slot] = []
  private var freeSlots: [Int] = []
  private var variants: [String: Variants] = [:]
  private var oldest = -1
  private var newest = -1
  /// The bytes the stored entries count for (``CacheEntry/cost``).
  private(set) var bytes = 0
  /// How many entries are stored.
  private(set) var count = 0
  /// How many stored entries lookups and inserts have examined, evicted or moved: a few per
  /// call, which tests check.
  private(set) var examined = 0

  /// The stored entry that answers `request`, marked as the most recently used.
  mutating func lookup(_ request: HTTPRequest) -> CacheEntry? {
    guard let stored = variants[CacheEntry.key(for: request.url)] else { return nil }
    let values = stored.names.map { CacheEntry.value(of: $0, in: request) }
    guard let index = stored.slots[values] else { return nil }
    examined += 1
    unlink(index)
    append(index)
    return slots[index].entry
  }

  /// Store `entry`, replacing the variant it matches (and its URL's variants that vary on other
  /// headers), then evict the least recently used entries until `budget` holds. An entry that
  /// costs more than the whole budget is not stored, and what is stored stays.
  mutating func insert(_ entry: CacheEntry, budget: Int) {
    let key = entry.key
    let cost = entry.cost(key: key)
    guard cost <= budget else { return }
    let names = entry.varying.keys.sorted()
    let values = names.map { entry.varying[$0] ?? nil }
    if let stored = variants[key] {
      if stored.names != names {
        remove(key)
      } else if let index = stored.slots[values] {
        release(index)
      }
    }
    let index = freeSlots.popLast() ?? slots.count
    let slot = Slot(entry: entry, key: key, values: values, cost: cost)
    if index == slots.count {
      slots.append(slot)
    } else {
      slots[index] = slot
    }
    append(index)
    variants[key, default: Variants(names: names)].slots[values] = index
    bytes += slot.cost
    count += 1
    while bytes > budget, oldest >= 0 {
      release(oldest)
    }
  }

  /// Drop every entry stored for `key`.
  mutating func remove(_ key: String) {
    guard let stored = variants[key] else { return }
    for index in stored.slots.values {
      release(index)
    }
  }

  /// Drop the entry in slot `index`: out of the list, its URL's variants and the count.
  private mutating func release(_ index: Int) {
    examined += 1
    let slot = slots[index]
    unlink(index)
    variants[slot.key]?.slots[slot.values] = nil
    if variants[slot.key]?.slots.isEmpty == true {
      variants[slot.key] = nil
    }
    bytes -= slot.cost
    count -= 1
    slots[index] = Slot()
    freeSlots.append(index)
  }

  /// Take slot `index` out of the list.
  private mutating func unlink(_ index: Int) {
    let (older, newer) = (slots[index].older, slots[index].newer)
    if older >= 0 { slots[older].newer = newer } else { oldest = newer }
    if newer >= 0 { slots[newer].older = older } else { newest = older }
    slots[index].older = -1
    slots[index].newer = -1
  }

  /// Put slot `index` at the most recently used end of the list.
  private mutating func append(_ index: Int) {
    slots[index].older = newest
    slots[index].newer = -1
    if newest >= 0 { slots[newest].newer = index } else { oldest = index }
    newest = index
  }
}

extension CacheEntry {
  /// The bytes counted for each entry beyond its strings and data: the entry, its response and
  /// stored request, their URL objects and header arrays, and its place in the store. Measured:
  /// 40,000 stored empty answers take 1,184 bytes of resident memory each (release build,
  /// Linux), 107 of them the strings ``cost(key:)`` counts.
  static let fixedCost = 1_080

  /// The bytes the entry counts for against the memory budget: the body, the response's headers,
  /// the stored request's URL and headers, the response's URL, the `Vary` values, the store's key,
  /// and ``fixedCost``.
  var cost: Int { cost(key: key) }

  /// ``cost``, with the store's key already at hand.
  func cost(key: String) -> Int {
    let request = response.request
    return Self.fixedCost + response.body.count + Self.bytes(of: response.headers.fields)
      + (request.map { $0.url.absoluteString.utf8.count + Self.bytes(of: $0.headers.fields) } ?? 0)
      + (response.url?.absoluteString.utf8.count ?? 0)
      + varying.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.utf8.count ?? 0) }
      + key.utf8.count
  }

  private static func bytes(of fields: [HTTPHeaders.Field]) -> Int {
    fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
  }

  /// This entry as the cache keeps it: what answering and matching need. The stored request
  /// keeps its method, URL and headers, not its body (a `GET` answer never needs it); the
  /// response keeps no transfer metrics (an answer from the cache makes no transfer).
  var trimmed: CacheEntry {
    var trimmed = self
    trimmed.response.request?.body = nil
    trimmed.response.request?.bodyFile = nil
    trimmed.response.metrics = nil
    return trimmed
  }
}
