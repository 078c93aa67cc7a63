package docx

// Fonts and colours of the house style. Calibri and Consolas are in every
// Word installation; LibreOffice substitutes metric-compatible or close
// fonts. Calibri has no Chinese, Japanese, Korean, Hebrew or Arabic, so
// text in those scripts is declared in fonts that have them: Word picks
// the East Asian font for CJK runs and the complex-script one for
// right-to-left and Indic runs. Microsoft YaHei and Arial are in every
// Windows and Mac Office installation (YaHei sets Japanese kana and
// Korean Hangul too). LibreOffice sets CJK in the Noto CJK fonts where
// they are installed, and Arial in its metric twin Liberation Sans,
// whose 2.x release has Hebrew and 1.x has not; Arabic falls back to
// another installed font such as DejaVu Sans.
const (
	bodyFont     = "Calibri"
	eastAsiaFont = "Microsoft YaHei"
	complexFont  = "Arial"
	codeFont     = "Consolas"
	accent       = "1F3864" // headings, title
	accent2      = "2F5496" // second-level headings
	ruleColour   = "BFBFBF" // table borders, rules
	headerFill   = "D9E2F3" // table header row
	codeFill     = "F2F4F7" // code blocks and spans
	mutedText    = "595959" // captions, quotes, footer
	linkColour   = "0563C1"
)

// bodyFonts and codeFonts declare a font for each of Word's four
// script slots.
const (
	bodyFonts = `<w:rFonts w:ascii="` + bodyFont + `" w:hAnsi="` + bodyFont + `" w:eastAsia="` + eastAsiaFont + `" w:cs="` + complexFont + `"/>`
	codeFonts = `<w:rFonts w:ascii="` + codeFont + `" w:hAnsi="` + codeFont + `" w:eastAsia="` + eastAsiaFont + `" w:cs="` + complexFont + `"/>`
)

// stylesXML is word/styles.xml. Style names are Word's built-in ones
// (lower-case "heading 1" and "caption" are how Word names those
// internally), so that the navigation pane, tables of contents, tables of
// figures and the style gallery recognise them; Word shows them
// capitalised.
var stylesXML = xmlHeader + `<w:styles xmlns:w="` + nsW + `">` +
	`<w:docDefaults>` +
	`<w:rPrDefault><w:rPr>` + bodyFonts +
	`<w:sz w:val="22"/><w:szCs w:val="22"/><w:lang w:val="en-US" w:eastAsia="en-US" w:bidi="ar-SA"/></w:rPr></w:rPrDefault>` +
	`<w:pPrDefault><w:pPr><w:spacing w:after="160" w:line="276" w:lineRule="auto"/></w:pPr></w:pPrDefault>` +
	`</w:docDefaults>` +

	`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/>` +
	`<w:rPr><w:color w:val="262626"/></w:rPr></w:style>` +

	`<w:style w:type="character" w:default="1" w:styleId="DefaultParagraphFont"><w:name w:val="Default Paragraph Font"/><w:uiPriority w:val="1"/><w:semiHidden/><w:unhideWhenUsed/></w:style>` +

	`<w:style w:type="table" w:default="1" w:styleId="TableNormal"><w:name w:val="Normal Table"/><w:uiPriority w:val="99"/><w:semiHidden/><w:unhideWhenUsed/>` +
	`<w:tblPr><w:tblInd w:w="0" w:type="dxa"/><w:tblCellMar><w:top w:w="0" w:type="dxa"/><w:left w:w="108" w:type="dxa"/><w:bottom w:w="0" w:type="dxa"/><w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>` +

	`<w:style w:type="numbering" w:default="1" w:styleId="NoList"><w:name w:val="No List"/><w:uiPriority w:val="99"/><w:semiHidden/><w:unhideWhenUsed/></w:style>` +

	`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="10"/><w:qFormat/>` +
	`<w:pPr><w:pBdr><w:bottom w:val="single" w:sz="8" w:space="6" w:color="` + accent2 + `"/></w:pBdr><w:spacing w:after="320" w:line="240" w:lineRule="auto"/><w:contextualSpacing/></w:pPr>` +
	`<w:rPr><w:color w:val="` + accent + `"/><w:kern w:val="28"/><w:sz w:val="52"/><w:szCs w:val="52"/></w:rPr></w:style>` +

	headingStyleXML("1", "0", "360", "120", "32", accent, false) +
	headingStyleXML("2", "1", "280", "80", "26", accent2, false) +
	headingStyleXML("3", "2", "240", "60", "23", accent, false) +
	headingStyleXML("4", "3", "200", "40", "22", accent2, true) +

	listStyleXML("ListBullet", "List Bullet", "1", "0") +
	listStyleXML("ListBullet2", "List Bullet 2", "1", "1") +
	listStyleXML("ListBullet3", "List Bullet 3", "1", "2") +
	listStyleXML("ListNumber", "List Number", "2", "0") +
	listStyleXML("ListNumber2", "List Number 2", "2", "1") +
	listStyleXML("ListNumber3", "List Number 3", "2", "2") +

	`<w:style w:type="paragraph" w:styleId="ListContinue"><w:name w:val="List Continue"/><w:basedOn w:val="Normal"/><w:uiPriority w:val="99"/>` +
	`<w:pPr><w:spacing w:after="80"/><w:ind w:left="360"/></w:pPr></w:style>` +

	`<w:style w:type="paragraph" w:styleId="Quote"><w:name w:val="Quote"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="29"/><w:qFormat/>` +
	`<w:pPr><w:pBdr><w:left w:val="single" w:sz="18" w:space="10" w:color="` + accent2 + `"/></w:pBdr><w:spacing w:before="80" w:after="160"/><w:ind w:left="284" w:right="284"/></w:pPr>` +
	`<w:rPr><w:i/><w:iCs/><w:color w:val="` + mutedText + `"/></w:rPr></w:style>` +

	`<w:style w:type="paragraph" w:customStyle="1" w:styleId="Code"><w:name w:val="Code"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="30"/><w:qFormat/>` +
	`<w:pPr><w:pBdr>` +
	`<w:top w:val="single" w:sz="4" w:space="4" w:color="E1E4E8"/><w:left w:val="single" w:sz="4" w:space="4" w:color="E1E4E8"/>` +
	`<w:bottom w:val="single" w:sz="4" w:space="4" w:color="E1E4E8"/><w:right w:val="single" w:sz="4" w:space="4" w:color="E1E4E8"/>` +
	`</w:pBdr><w:shd w:val="clear" w:color="auto" w:fill="` + codeFill + `"/><w:spacing w:before="80" w:after="240" w:line="240" w:lineRule="auto"/><w:ind w:left="57" w:right="57"/></w:pPr>` +
	`<w:rPr>` + codeFonts + `<w:noProof/><w:color w:val="24292E"/><w:sz w:val="18"/><w:szCs w:val="18"/></w:rPr></w:style>` +

	`<w:style w:type="character" w:customStyle="1" w:styleId="CodeChar"><w:name w:val="Code Char"/><w:basedOn w:val="DefaultParagraphFont"/><w:uiPriority w:val="30"/><w:qFormat/>` +
	`<w:rPr>` + codeFonts + `<w:noProof/><w:color w:val="24292E"/><w:sz w:val="19"/><w:szCs w:val="19"/><w:shd w:val="clear" w:color="auto" w:fill="` + codeFill + `"/></w:rPr></w:style>` +

	`<w:style w:type="character" w:styleId="Hyperlink"><w:name w:val="Hyperlink"/><w:basedOn w:val="DefaultParagraphFont"/><w:uiPriority w:val="99"/><w:unhideWhenUsed/>` +
	`<w:rPr><w:color w:val="` + linkColour + `"/><w:u w:val="single"/></w:rPr></w:style>` +

	`<w:style w:type="paragraph" w:customStyle="1" w:styleId="Figure"><w:name w:val="Figure"/><w:basedOn w:val="Normal"/><w:next w:val="Caption"/><w:uiPriority w:val="34"/><w:qFormat/>` +
	`<w:pPr><w:keepNext/><w:spacing w:before="120" w:after="60" w:line="240" w:lineRule="auto"/><w:jc w:val="center"/></w:pPr></w:style>` +

	`<w:style w:type="paragraph" w:styleId="Caption"><w:name w:val="caption"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="35"/><w:unhideWhenUsed/><w:qFormat/>` +
	`<w:pPr><w:spacing w:after="240" w:line="240" w:lineRule="auto"/><w:jc w:val="center"/></w:pPr>` +
	`<w:rPr><w:i/><w:iCs/><w:color w:val="` + mutedText + `"/><w:sz w:val="19"/><w:szCs w:val="19"/></w:rPr></w:style>` +

	`<w:style w:type="paragraph" w:customStyle="1" w:styleId="TableText"><w:name w:val="Table Text"/><w:basedOn w:val="Normal"/><w:uiPriority w:val="36"/><w:qFormat/>` +
	`<w:pPr><w:spacing w:before="40" w:after="40" w:line="240" w:lineRule="auto"/></w:pPr><w:rPr><w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>` +

	`<w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/><w:basedOn w:val="TableNormal"/><w:uiPriority w:val="39"/>` +
	`<w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr>` +
	`<w:tblPr><w:tblBorders>` +
	`<w:top w:val="single" w:sz="4" w:space="0" w:color="` + ruleColour + `"/><w:left w:val="single" w:sz="4" w:space="0" w:color="` + ruleColour + `"/>` +
	`<w:bottom w:val="single" w:sz="4" w:space="0" w:color="` + ruleColour + `"/><w:right w:val="single" w:sz="4" w:space="0" w:color="` + ruleColour + `"/>` +
	`<w:insideH w:val="single" w:sz="4" w:space="0" w:color="` + ruleColour + `"/><w:insideV w:val="single" w:sz="4" w:space="0" w:color="` + ruleColour + `"/>` +
	`</w:tblBorders><w:tblCellMar><w:left w:w="100" w:type="dxa"/><w:right w:w="100" w:type="dxa"/></w:tblCellMar></w:tblPr>` +
	`<w:tblStylePr w:type="firstRow"><w:rPr><w:b/><w:bCs/></w:rPr><w:tcPr><w:shd w:val="clear" w:color="auto" w:fill="` + headerFill + `"/></w:tcPr></w:tblStylePr>` +
	`</w:style>` +

	`<w:style w:type="paragraph" w:styleId="Footer"><w:name w:val="footer"/><w:basedOn w:val="Normal"/><w:uiPriority w:val="99"/><w:unhideWhenUsed/>` +
	`<w:pPr><w:tabs><w:tab w:val="center" w:pos="4536"/><w:tab w:val="right" w:pos="9072"/></w:tabs><w:spacing w:after="0" w:line="240" w:lineRule="auto"/><w:jc w:val="center"/></w:pPr>` +
	`<w:rPr><w:color w:val="` + mutedText + `"/><w:sz w:val="18"/><w:szCs w:val="18"/></w:rPr></w:style>` +

	`</w:styles>`

// headingStyleXML is a heading style: the outline level is what puts it
// in the navigation pane and tables of contents.
func headingStyleXML(n, outline, before, after, size, colour string, italic bool) string {
	var it string
	if italic {
		it = `<w:i/><w:iCs/>`
	}
	return `<w:style w:type="paragraph" w:styleId="Heading` + n + `"><w:name w:val="heading ` + n + `"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="9"/><w:qFormat/>` +
		`<w:pPr><w:keepNext/><w:keepLines/><w:spacing w:before="` + before + `" w:after="` + after + `" w:line="240" w:lineRule="auto"/><w:outlineLvl w:val="` + outline + `"/></w:pPr>` +
		`<w:rPr><w:b/><w:bCs/>` + it + `<w:color w:val="` + colour + `"/><w:sz w:val="` + size + `"/><w:szCs w:val="` + size + `"/></w:rPr></w:style>`
}

// listStyleXML is a list paragraph style tied to its numbering, so that
// applying it in Word makes a list item too.
func listStyleXML(id, name, numID, level string) string {
	return `<w:style w:type="paragraph" w:styleId="` + id + `"><w:name w:val="` + name + `"/><w:basedOn w:val="Normal"/><w:uiPriority w:val="99"/><w:unhideWhenUsed/>` +
		`<w:pPr><w:numPr><w:ilvl w:val="` + level + `"/><w:numId w:val="` + numID + `"/></w:numPr><w:spacing w:after="80"/></w:pPr></w:style>`
}
