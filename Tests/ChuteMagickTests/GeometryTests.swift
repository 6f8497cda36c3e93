import ChuteCore
import Testing

@testable import ChuteCatalog
@testable import ChuteMagick

/// The grammars of `crop` and the ratios of `crop` and `aspect`, and where their boxes land.
@Suite struct GeometryTests {
    @Test(arguments: [
        (
            "800x600+10+20",
            CropGeometry.box(
                width: .pixels(800),
                height: .pixels(600),
                offset: .init(x: .pixels(10), y: .pixels(20))
            )
        ),
        ("800x600", CropGeometry.box(width: .pixels(800), height: .pixels(600), offset: nil)),
        (
            "50%x12.5%+0+10%",
            CropGeometry.box(
                width: .percent(50),
                height: .percent(12.5),
                offset: .init(x: .pixels(0), y: .percent(10))
            )
        ),
        ("16:9", CropGeometry.ratio(AspectRatio("16:9")!)),
        ("1.91:1", CropGeometry.ratio(AspectRatio("1.91:1")!)),
    ])
    func wellFormedCropsParse(text: String, expected: CropGeometry) throws {
        #expect(try CropGeometry(parsing: text) == expected)
    }

    @Test(arguments: [
        "", "800", "800x", "x600", "0x600", "800x0", "800x600+10", "800x600+10+20+30", "800x600-10-20", "-800x600",
        "800X600", "101%x50%", "0%x50%", "50%x50%+101%+0", "1e3x600", "800x600+1.5+2", "16:", ":9", "0:9", "16:9:1",
        "-16:9", "16:9+0+0", "abc", "800 x 600",
    ])
    func malformedCropsAreRefused(text: String) {
        #expect(throws: CropGeometry.Problem.self) { try CropGeometry(parsing: text) }
    }

    @Test func theRulesReaderSaysWhatIsWrongWithACrop() {
        let syntax = ImageOptions.crop.spec.syntax
        guard case .text(let grammar) = syntax else {
            Issue.record("crop is not a text option")
            return
        }
        #expect(grammar.validate("200x100+50+40") == nil)
        #expect(grammar.validate("200x100+50")?.contains("WxH+X+Y") == true)
        #expect(grammar.validate("4:0")?.contains("ratio") == true)
    }

    @Test func boxesLandWhereTheGrammarSays() throws {
        func box(_ text: String, _ gravity: Gravity = .center) throws -> String {
            switch try CropGeometry(parsing: text).rectangle(inWidth: 400, height: 300, gravity: gravity) {
            case .success(let box): "\(box.width)x\(box.height)+\(box.x)+\(box.y)"
            case .failure(let problem): problem.message
            }
        }
        #expect(try box("200x100+50+40") == "200x100+50+40")
        #expect(try box("200x100") == "200x100+100+100")
        #expect(try box("200x100", .northwest) == "200x100+0+0")
        #expect(try box("200x100", .southeast) == "200x100+200+200")
        #expect(try box("200x100", .south) == "200x100+100+200")
        #expect(try box("200x100", .west) == "200x100+0+100")
        #expect(try box("50%x50%") == "200x150+100+75")
        #expect(try box("25%x50%+75%+10%") == "100x150+300+30")
        #expect(try box("100%x100%") == "400x300+0+0")
        #expect(try box("16:9") == "400x225+0+37")
        #expect(try box("16:9", .south) == "400x225+0+75")
        #expect(try box("1:1", .east) == "300x300+100+0")
        #expect(try box("1:2") == "150x300+125+0")
        #expect(try box("300x200+200+0") == "the crop box 300x200+200+0 does not lie inside the 400x300 image")
        #expect(try box("500x100") == "the crop box 500x100+0+100 does not lie inside the 400x300 image")
    }

    @Test func ratiosGiveTheLargestBoxInsideAndTheSmallestAround() throws {
        func text(_ size: (width: Int, height: Int)) -> String { "\(size.width)x\(size.height)" }
        let portrait = try #require(AspectRatio("4:5"))
        #expect(text(portrait.largestBox(inWidth: 400, height: 300)) == "240x300")
        #expect(text(portrait.smallestBox(holdingWidth: 400, height: 300)) == "400x500")
        let wide = try #require(AspectRatio("16:9"))
        #expect(text(wide.largestBox(inWidth: 1000, height: 100)) == "178x100")
        #expect(text(wide.smallestBox(holdingWidth: 160, height: 100)) == "178x100")
        #expect(text(try #require(AspectRatio("4:3")).smallestBox(holdingWidth: 1000, height: 100)) == "1000x750")
        #expect(AspectRatio("4:5x") == nil && AspectRatio("4") == nil && AspectRatio("0:5") == nil)
    }

    @Test func coloursAreNamesOrHexadecimalAndSomeAreTransparent() {
        for text in ["white", "Black", "transparent", "none", "#fff", "#FF0000", "#ff000080"] {
            #expect(ImageColor(text) != nil, "\(text)")
        }
        for text in ["", "whitish", "#ff", "#ff00000", "#gg0000", "rgb(1,2,3)", "#ff0000800", "white "] {
            #expect(ImageColor(text) == nil, "\(text)")
        }
        #expect(ImageColor("#ff000080")?.isOpaque == false && ImageColor("#ff0000ff")?.isOpaque == true)
        #expect(ImageColor("transparent")?.isOpaque == false && ImageColor("#abc")?.isOpaque == true)
    }

    @Test func aWatermarkIsOneLineOfAtMost200Characters() throws {
        guard case .text(let grammar) = ImageOptions.watermark.spec.syntax,
            case .text(let path) = ImageOptions.watermarkImage.spec.syntax
        else {
            Issue.record("watermark and watermarkImage are not text options")
            return
        }
        #expect(grammar.validate("© 2026 Me") == nil)
        #expect(grammar.validate(String(repeating: "x", count: 201)) == "a watermark is at most 200 characters")
        #expect(grammar.validate("two\nlines") == "a watermark is one line, without control characters")
        #expect(path.validate("/srv/logo.png") == nil)
        #expect(path.validate("logo.png") == "the path must be absolute, such as /srv/chute/logo.png")
    }
}
