import ChuteCore
import Testing

/// A pattern, a name, and whether the name should match.
private let matchCases: [(String, String, Bool)] = [
    // Case-insensitive, in the pattern and in the name.
    ("*.heic", "IMG_0001.HEIC", true),
    ("*.HEIC", "img_0001.heic", true),
    ("café*", "CAFÉ.jpg", true),
    ("*.heic", "a.heic.tmp", false),
    ("*.heic", "heic", false),
    // `*` is any run, including an empty one; repeated stars are one.
    ("*.jpg", ".jpg", true),
    ("a*b", "ab", true),
    ("a*b", "axxxb", true),
    ("a*b", "abx", false),
    ("**.jpg", "x.jpg", true),
    ("*", "anything at all", true),
    ("*a*b*c", "xxaxxbxxc", true),
    ("*a*b*c", "xxaxxcxxb", false),
    // `?` is exactly one character.
    ("IMG_????.jpg", "IMG_0001.jpg", true),
    ("IMG_????.jpg", "IMG_001.jpg", false),
    ("IMG_????.jpg", "IMG_00001.jpg", false),
    // Sets and ranges.
    ("[abc]*", "b1", true),
    ("[abc]*", "d1", false),
    ("[A-C]x", "bx", true),
    ("file[0-9].txt", "file7.txt", true),
    ("file[0-9].txt", "filex.txt", false),
    ("[a-]", "-", true),
    ("[]x]", "]", true),
    ("[]x]", "x", true),
    ("[]x]", "y", false),
    // Negation, with `!` or `^`.
    ("[!0-9]*", "a1", true),
    ("[!0-9]*", "1a", false),
    ("[^a]", "b", true),
    ("[^a]", "A", false),
    // Braces: either alternative, as in a shell; they nest and combine.
    ("*.{dng,cr2,nef}", "IMG_1.CR2", true),
    ("*.{dng,cr2,nef}", "IMG_1.arw", false),
    ("*.{jpg,jpeg}", "a.jpeg", true),
    ("*.{jp{,e}g,png}", "a.jpeg", true),
    ("*.{jp{,e}g,png}", "a.jpg", true),
    ("*.{jp{,e}g,png}", "a.jpeeg", false),
    ("{IMG,DSC}_*.{jpg,heic}", "dsc_1.heic", true),
    ("{a,}x", "x", true),
    // A brace without a comma inside, or never closed, is itself.
    ("{a}.jpg", "{a}.jpg", true),
    ("{a}.jpg", "a.jpg", false),
    ("x{y", "x{y", true),
    ("{a,b", "{a,b", true),
    // Everything else is literal.
    ("photo.jpg", "photo.jpg", true),
    ("photo.jpg", "photo_jpg", false),
    ("a+b(1).jpg", "A+B(1).JPG", true),
]

@Suite struct GlobPatternTests {
    @Test(arguments: matchCases)
    func matches(pattern: String, name: String, expected: Bool) throws {
        #expect(try GlobPattern(pattern).matches(name) == expected)
    }

    @Test func keepsThePatternAsWritten() throws {
        let glob = try GlobPattern("IMG_*.HEIC")
        #expect(glob.pattern == "IMG_*.HEIC")
        #expect(glob.description == "IMG_*.HEIC")
    }

    @Test(
        arguments: [
            ("", "empty pattern"),
            ("photos/*.jpg", "a glob matches file names only and cannot contain '/'"),
            ("[abc", "'[' is never closed"),
            ("IMG[0-9", "'[' is never closed"),
            ("[z-a]", "range 'z-a' is reversed"),
            ("{a,[b}", "'[' is never closed"),
            (
                "{0,1,2,3}{0,1,2,3}{0,1,2,3}{0,1,2,3}{0,1}",
                "its braces spell out more than 256 alternatives"
            ),
        ]
    )
    func refusesInvalidPattern(pattern: String, reason: String) {
        let error = #expect(throws: GlobError.self) { try GlobPattern(pattern) }
        #expect(error?.pattern == pattern)
        #expect(error?.reason == reason)
    }

    @Test func anExtensionIsLiteralOnlyWithoutBraces() throws {
        #expect(try GlobPattern("scan-*.PDF").literalExtension == "pdf")
        #expect(try GlobPattern("*.{jpg,jpeg}").literalExtension == nil)
        #expect(try GlobPattern("*.jp?g").literalExtension == nil)
    }

    @Test func errorDescriptionNamesThePattern() {
        let error = #expect(throws: GlobError.self) { try GlobPattern("[abc") }
        #expect(error?.description == "invalid glob '[abc': '[' is never closed")
    }
}
