import ChuteCore
import Testing

@testable import ChuteFFmpeg

/// Which tags each `metadata` policy keeps, and the `atempo` stages of `speed`.
@Suite struct TagPolicyTests {
    @Test(arguments: [
        ("language", true, true), ("LANGUAGE", true, true), ("title", false, true), ("artist", false, true),
        ("creation_time", false, true), ("make", false, true), ("model", false, true), ("encoder", false, true),
        ("handler_name", false, true), ("com.android.version", false, true),
        ("com.apple.quicktime.software", false, true),
        ("location", false, false), ("location-eng", false, false),
        ("com.apple.quicktime.location.ISO6709", false, false),
        ("com.android.location", false, false), ("gps_latitude", false, false), ("©xyz", false, false),
    ])
    func stripKeepsOnlyTheLanguageAndLocationRemovesPlaces(key: String, keptByStrip: Bool, keptByLocation: Bool) {
        #expect(TagCopy.survives(key: key, policy: .strip, onCoverPicture: false) == keptByStrip)
        #expect(TagCopy.survives(key: key, policy: .location, onCoverPicture: false) == keptByLocation)
        #expect(TagCopy.survives(key: key, policy: .keep, onCoverPicture: false))
    }

    @Test func aCoverPictureKeepsItsType() {
        #expect(TagCopy.survives(key: "comment", policy: .strip, onCoverPicture: true))
        #expect(!TagCopy.survives(key: "comment", policy: .strip, onCoverPicture: false))
        #expect(!TagCopy.survives(key: "title", policy: .strip, onCoverPicture: true))
    }

    @Test func tempoIsChainedInStagesOfHalfToDouble() {
        #expect(ConversionPlan.tempoFilters(2) == ["atempo=tempo=2.0"])
        #expect(ConversionPlan.tempoFilters(4) == ["atempo=tempo=2.0", "atempo=tempo=2.0"])
        #expect(ConversionPlan.tempoFilters(3) == ["atempo=tempo=2.0", "atempo=tempo=1.5"])
        #expect(ConversionPlan.tempoFilters(0.25) == ["atempo=tempo=0.5", "atempo=tempo=0.5"])
        #expect(ConversionPlan.tempoFilters(0.3) == ["atempo=tempo=0.5", "atempo=tempo=0.6"])
        #expect(ConversionPlan.tempoFilters(1) == [])
    }
}
