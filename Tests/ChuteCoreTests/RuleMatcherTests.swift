import ChuteApp
import ChuteCatalog
import ChuteCore
import Foundation
import SystemPackage
import Testing

@Suite struct RuleMatcherTests {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func config(_ rules: [Rule], watches: [FilePath] = ["/in"]) -> ChuteConfig {
        ChuteConfig(watches: watches.map { WatchConfig(path: $0) }, rules: rules)
    }

    private func rule(
        _ name: String,
        _ glob: String,
        to format: String = "jpg",
        output: FilePath = "/out",
        filters: RuleFilters = RuleFilters(),
        rename: String = "{stem}.{ext}",
        keepStructure: Bool = true,
        watches: [FilePath] = []
    ) throws -> Rule {
        Rule(
            name: name,
            match: [try GlobPattern(glob)],
            to: try #require(Engines.registry.format(named: format)),
            output: output,
            filters: filters,
            rename: try NameTemplate(rename),
            keepStructure: keepStructure,
            watches: watches
        )
    }

    private func facts(size: Int64 = 1000, age: Double = 3600, type: MediaType? = .jpeg) -> FileFacts {
        FileFacts(size: size, modified: self.now.addingTimeInterval(-age), sniffed: type)
    }

    private func decide(
        _ matcher: RuleMatcher,
        _ path: FilePath,
        root: FilePath = "/in",
        facts: FileFacts?
    )
        -> MatchDecision
    {
        matcher.decide(path: path, root: root, facts: facts, now: self.now, date: self.now)
    }

    @Test func theFirstMatchingRuleWinsAndKeepsTheSubFolders() throws {
        let matcher = RuleMatcher(
            config: self.config([try self.rule("photos", "*.HEIC"), try self.rule("all", "*", to: "png")])
        )
        let decision = self.decide(matcher, "/in/trip/day 1/IMG_1.heic", facts: self.facts(type: .heif))
        guard case .matched(let rule, let plan, let passedOver) = decision else {
            Issue.record("expected a match, got \(decision)")
            return
        }
        #expect(rule.name == "photos")
        #expect(plan.path == "/out/trip/day 1/IMG_1.jpg")
        #expect(passedOver.isEmpty)
    }

    @Test func filtersPassTheFileToTheNextRuleAndSayWhy() throws {
        let matcher = RuleMatcher(
            config: self.config([
                try self.rule("small", "*.jpg", filters: RuleFilters(maxSize: 500)),
                try self.rule("videos-only", "*.jpg", filters: RuleFilters(types: [.video])),
                try self.rule("fallback", "*.jpg", to: "webp", output: "/web"),
            ])
        )
        let decision = self.decide(matcher, "/in/a.jpg", facts: self.facts(size: 1000))
        guard case .matched(let rule, let plan, let passedOver) = decision else {
            Issue.record("expected a match, got \(decision)")
            return
        }
        #expect(rule.name == "fallback")
        #expect(plan.path == "/web/a.webp")
        #expect(
            passedOver == [
                "rule 'small': size 1000 bytes is above maxSize 500",
                "rule 'videos-only': type filter wants video, found jpeg content",
            ]
        )
    }

    @Test func noRuleAndAllFilteredAreTold() throws {
        let matcher = RuleMatcher(
            config: self.config([try self.rule("big", "*.jpg", filters: RuleFilters(minSize: 10_000))])
        )
        #expect(self.decide(matcher, "/in/a.png", facts: self.facts()) == .noRule)
        #expect(
            self.decide(matcher, "/in/a.jpg", facts: self.facts(size: 10))
                == .filtered(reasons: ["rule 'big': size 10 bytes is below minSize 10000"])
        )
    }

    @Test func aFileYoungerThanMinAgeWaits() throws {
        let matcher = RuleMatcher(
            config: self.config([try self.rule("settled", "*.jpg", filters: RuleFilters(minAge: .seconds(60)))])
        )
        #expect(
            self.decide(matcher, "/in/a.jpg", facts: self.facts(age: 20))
                == .notYet(rule: "settled", after: .milliseconds(40001))
        )
        guard case .matched = self.decide(matcher, "/in/a.jpg", facts: self.facts(age: 61)) else {
            Issue.record("an old enough file should match")
            return
        }
    }

    @Test func ignoredNamesAndFoldersNeverReachTheRules() throws {
        let matcher = RuleMatcher(config: self.config([try self.rule("all", "*")]))
        for path: FilePath in [
            "/in/@eaDir/x.jpg", "/in/a/#recycle/x.jpg", "/in/x.jpg.part", "/in/._x.jpg", "/in/.x.jpg.Ab12Cd",
        ] {
            guard case .ignored = self.decide(matcher, path, facts: self.facts()) else {
                Issue.record("\(path) should be ignored")
                continue
            }
        }
    }

    @Test func templatesFlatteningAndWatchRestrictions() throws {
        let matcher = RuleMatcher(
            config: self.config(
                [
                    try self.rule("only-b", "*.jpg", output: "/b-out", watches: ["/b"]),
                    try self.rule(
                        "flat",
                        "*.jpg",
                        to: "webp",
                        rename: "{date}-{stem}-{sourceExt}.{ext}",
                        keepStructure: false
                    ),
                ],
                watches: ["/a", "/b"]
            )
        )
        #expect(matcher.root(containing: "/b/x/y.jpg") == "/b")
        #expect(matcher.root(containing: "/c/y.jpg") == nil)
        guard case .matched(let rule, let plan, _) = self.decide(matcher, "/a/deep/IMG.JPG", root: "/a", facts: nil)
        else {
            Issue.record("expected a match")
            return
        }
        #expect(rule.name == "flat")
        #expect(plan.path == "/out/2027-01-15-IMG-jpg.webp")
        guard case .matched(let other, _, _) = self.decide(matcher, "/b/IMG.jpg", root: "/b", facts: nil) else {
            Issue.record("expected a match")
            return
        }
        #expect(other.name == "only-b")
    }

    @Test func toSameWritesTheInputsOwnFormatOrPassesTheFileOn() throws {
        let matcher = RuleMatcher(
            config: self.config([try self.rule("keep", "*", to: "same", rename: "{stem}-small.{ext}")])
        )
        let decision = self.decide(matcher, "/in/IMG_1.JPEG", facts: self.facts(type: .heif))
        guard case .matched(let rule, let plan, _) = decision else {
            Issue.record("expected a match, got \(decision)")
            return
        }
        #expect(rule.to.name == "heic" && !rule.to.followsInput)
        #expect(plan.path == "/out/IMG_1-small.heic")
        // Content the image engine does not write (here, not even an image) passes the file on to later rules.
        let refused = self.decide(matcher, "/in/clip.jpg", facts: self.facts(type: .mp4))
        guard case .filtered(let reasons) = refused, let reason = reasons.first else {
            Issue.record("expected the file to be passed on, got \(refused)")
            return
        }
        #expect(reason.hasPrefix("rule 'keep': 'to: same' writes "), "\(reason)")
        #expect(reason.contains(" jpg, ") && reason.contains(" png, "), "\(reason)")
        #expect(reason.hasSuffix(", not mp4 content"), "\(reason)")
    }
}
