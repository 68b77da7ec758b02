// ErrandTesting is what test targets import: everything in ErrandStubs (stubs, cassettes,
// contracts, clocks, fixtures), plus reporting to Swift Testing, so that an unused route or an
// unplayed cassette fails the test that registered it.
//
// Apps and command-line tools that use stubs outside tests import ErrandStubs instead, which
// links no test framework.
@_exported import ErrandStubs
