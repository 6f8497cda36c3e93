import ChuteCore
import Testing

@testable import ChuteCatalog
@testable import ChuteFFmpeg

/// The grammar of trim times, and the filters that crop, turn, mirror and reshape a video's picture.
@Suite struct VideoEditingTests {
    @Test(arguments: [
        ("90", 90.0), ("2.5", 2.5), ("1:30", 90.0), ("00:01:30.5", 90.5), ("1:00:00", 3600.0), ("0", 0.0),
        ("2s", 2.0), ("500ms", 0.5), ("1.5m", 90.0), ("3 S", 3.0),
    ])
    func timesParse(text: String, seconds: Double) {
        #expect(MediaTime.seconds(text) == seconds)
    }

    @Test(arguments: ["", "1:", ":30", "1:60", "1:2:3:4", "-5", "1.5:30", "1e3", "abc", "2.", ".5"])
    func malformedTimesAreRefused(text: String) {
        #expect(MediaTime.seconds(text) == nil)
    }

    @Test func trimReadsStartAndEndOrDuration() {
        let ended = MediaOptions.trim(in: ConversionOptions(["start": "1:00", "end": "90"]))
        #expect(ended?.start == 60 && ended?.end == 90)
        let lasting = MediaOptions.trim(in: ConversionOptions(["start": "10", "duration": "5"]))
        #expect(lasting?.start == 10 && lasting?.end == 15)
        #expect(MediaOptions.trim(in: ConversionOptions(["duration": "5"]))?.end == 5)
        #expect(MediaOptions.trim(in: ConversionOptions(["crf": 20])) == nil)
    }

    @Test func geometryFiltersFollowTheStages() throws {
        let geometry = VideoGeometry(
            ConversionOptions(["crop": "1:1", "gravity": "west", "rotate": -90, "flip": true, "aspect": "16:9"])
        )
        var size = (width: 1281, height: 721)
        let orientation = try geometry.orientationFilters(size: &size)
        #expect(orientation == ["crop=w=720:h=720:x=0:y=0", "transpose=cclock", "vflip"])
        #expect(size == (720, 720))
        let aspect = geometry.aspectFilters(size: &size)
        #expect(aspect == ["pad=width=1280:height=720:x=280:y=0:color=black"])
        #expect(size == (1280, 720))
    }

    @Test func aCropBoxOutsideThePictureFails() {
        let geometry = VideoGeometry(ConversionOptions(["crop": "400x300+100+100"]))
        var size = (width: 320, height: 240)
        #expect(throws: FFmpegError.self) { try geometry.orientationFilters(size: &size) }
    }
}
